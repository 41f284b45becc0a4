# Source me on a GPU machine without package access: espeak-ng from .gpu-espeak/, wheels from .whl/ and .whl-bench/
# (scripts/prepare_wheels.sh), festival
# and the augmentation's needs from .gpu-festival/ and .gpu-augment/ where present,
# the package from src/ (see scripts/gpu_train_tiny.sh for how to prepare both folders).
mkdir -p /tmp/esp && for f in .gpu-espeak/*.deb; do dpkg -x "$f" /tmp/esp; done
cp .gpu-espeak/libpcaudio.so.0 /tmp/esp/usr/lib/x86_64-linux-gnu/
export LD_LIBRARY_PATH=/tmp/esp/usr/lib/x86_64-linux-gnu
export TICKTOCK_ESPEAK=/tmp/esp/usr/bin/espeak-ng TICKTOCK_ESPEAK_DATA=/tmp/esp/usr/lib/x86_64-linux-gnu
for w in .whl .whl-bench; do  # once per machine: a warm one keeps /tmp/site
  if [ -d $w ] && [ ! -f /tmp/site/.from$w ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site $w/*.whl && touch /tmp/site/.from$w
  fi
done
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
# festival (`train base --config retrain`) from .gpu-festival/ (scripts/prepare_festival.sh): its libraries
# only on festival's own path (they include stand-ins for ALSA and PulseAudio), through a wrapper
if [ -d .gpu-festival ]; then
  mkdir -p /tmp/fest && for f in .gpu-festival/*.deb; do dpkg -x "$f" /tmp/fest; done
  cp .gpu-festival/*.so.* /tmp/fest/usr/lib/x86_64-linux-gnu/
  printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/fest/usr/lib/x86_64-linux-gnu exec /tmp/fest/usr/bin/festival "$@"\n' > /tmp/fest/festival
  chmod +x /tmp/fest/festival
  export TICKTOCK_FESTIVAL=/tmp/fest/festival TICKTOCK_FESTIVAL_LIB=/tmp/fest/usr/share/festival
fi
# the augmentation chain from .gpu-augment/ (scripts/prepare_augment.sh): the room bank, pyworld built here
if [ -d .gpu-augment ]; then
  export TICKTOCK_ROOMS=$PWD/.gpu-augment/rooms.npz
  python3 -c "import pkg_resources" 2>/dev/null ||  # pyworld imports it
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu-augment/setuptools-*.whl
  { ls .gpu-augment/pyworld-*.whl >/dev/null 2>&1 &&
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu-augment/pyworld-*.whl &&
      python3 -c "import pyworld" 2>/dev/null; } || {
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu-augment/cython-*.whl
    PYTHONPATH=/tmp/site python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site \
      .gpu-augment/pyworld-*.tar.gz || echo "pyworld did not build here: data multi-engine will stop" >&2; }
fi
# Pico and MBROLA (`data multi-engine`'s other engines) from .gpu-voices/ (scripts/prepare_voices.sh): pico2wave
# reads its voices from /usr/share/pico/lang only, espeak-ng MBROLA's databases from /usr/share/mbrola only (both
# copied there where this machine lets us); espeak-ng runs the `mbrola` binary from PATH
if [ -f .gpu-voices/voices.tar.xz ]; then  # python's lzma: that machine may have no xz
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall('/tmp/voices')" .gpu-voices/voices.tar.xz
  { mkdir -p /usr/share/pico /usr/share/mbrola && cp -r /tmp/voices/usr/share/pico/lang /usr/share/pico/ &&
    cp -r /tmp/voices/usr/share/mbrola/* /usr/share/mbrola/; } 2>/dev/null ||
    echo "cannot write /usr/share: Pico's and MBROLA's voices stay out" >&2
  printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/voices/usr/lib/x86_64-linux-gnu exec /tmp/voices/usr/bin/pico2wave "$@"\n' \
    > /tmp/voices/pico2wave && chmod +x /tmp/voices/pico2wave
  export TICKTOCK_PICO=/tmp/voices/pico2wave PATH=/tmp/voices/usr/bin:$PATH
fi
