// Audio thread: hands each 128-sample block of the microphone (channel 0) to the page.
class CaptureProcessor extends AudioWorkletProcessor {
  process(inputs, outputs) {
    const input = inputs[0];
    if (input && input[0] && input[0].length) this.port.postMessage(input[0].slice(0));
    if (outputs[0] && outputs[0][0]) outputs[0][0].fill(0); // silent: the mic is never echoed
    return true;
  }
}
registerProcessor("ticktock-capture", CaptureProcessor);
