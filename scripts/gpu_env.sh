# Source me on a GPU machine without package access: espeak-ng from .gpu-espeak/, wheels from .whl/,
# the package from src/ (see scripts/gpu_train_tiny.sh for how to prepare both folders).
mkdir -p /tmp/esp && for f in .gpu-espeak/*.deb; do dpkg -x "$f" /tmp/esp; done
cp .gpu-espeak/libpcaudio.so.0 /tmp/esp/usr/lib/x86_64-linux-gnu/
export LD_LIBRARY_PATH=/tmp/esp/usr/lib/x86_64-linux-gnu
export TICKTOCK_ESPEAK=/tmp/esp/usr/bin/espeak-ng TICKTOCK_ESPEAK_DATA=/tmp/esp/usr/lib/x86_64-linux-gnu
if [ -d .whl ]; then python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl; fi
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
