#!/usr/bin/env bash
# The GPU session's one prepared script (issue #32): `make test-gpu`, then the GPU benchmarks,
# each against the CPU of the same machine, and benchmarks/results/gpu.md written from what ran.
#
#   bash benchmarks/gpu_check.sh            # from the repository root, on a machine with CUDA
#   DEVICE=cpu N_RUN=20000 N_STREAM=20000 STEPS=5 SKIP_TESTS=1 OUT=/tmp/g GPU_MD=/tmp/g/gpu.md \
#       bash benchmarks/gpu_check.sh                              # a dry run of the script
#
# Sizes (environment): N_RUN (run -o OUT.npy, default 10^7), N_STREAM (run --stream, MAJORITY,
# default 10^8), STEPS (train_throughput, default 60), CHECK_DYCK_ARGS, MODEL_FORWARD_ARGS.
# Every step's output is kept in
# $OUT (default benchmarks/results/gpu-raw/); gpu.md is rebuilt from it at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$PWD/.venv/bin/python}
HS="$PY -m hardsoft.cli"
DEVICE=${DEVICE:-cuda}
N_RUN=${N_RUN:-10000000}
N_STREAM=${N_STREAM:-100000000}
STEPS=${STEPS:-60}
CHECK_DYCK_ARGS=${CHECK_DYCK_ARGS:---lengths 100000,1000000 --count 2}
MODEL_FORWARD_ARGS=${MODEL_FORWARD_ARGS:---n 16384}
OUT=${OUT:-benchmarks/results/gpu-raw}
GPU_MD=${GPU_MD:-benchmarks/results/gpu.md}
mkdir -p "$OUT"
export HARDSOFT_THREADS=${HARDSOFT_THREADS:-1}
log() { echo "== $*" | tee -a "$OUT/steps.txt"; }
: > "$OUT/steps.txt"

log "device and versions"
$PY - <<'EOF' | tee "$OUT/env.txt"
import platform, torch, hardsoft
print("date", __import__("datetime").datetime.now().isoformat(timespec="seconds"))
print("machine", platform.platform(), "| python", platform.python_version())
print("torch", torch.__version__, "| cuda", torch.version.cuda, "| hardsoft", hardsoft.__version__)
if torch.cuda.is_available():
    print("gpu", torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).total_memory // 2**20, "MiB")
EOF

log "make test-gpu"
if [ -n "${SKIP_TESTS:-}" ]; then
  echo "skipped (SKIP_TESTS set)" | tee "$OUT/test-gpu.txt"
elif [ "$DEVICE" = cuda ]; then
  make test-gpu 2>&1 | tail -30 | tee "$OUT/test-gpu.txt"
else
  HARDSOFT_TEST_GPU=cpu OMP_NUM_THREADS=1 $PY -m pytest -q -m gpu tests/test_gpu.py 2>&1 \
    | tail -30 | tee "$OUT/test-gpu.txt"
fi

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
$HS compile "MOD(2,1)(#<['1'])" -a 01 -t soft-temperature -o "$W/parity.safetensors" >/dev/null
$HS compile "#<['1'] > #<['0']" -a 01 -t soft-temperature -o "$W/majority.safetensors" >/dev/null
$PY - "$W" "$N_RUN" "$N_STREAM" <<'EOF'
import sys, numpy as np
d, n_run, n_stream = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
for name, n in (("run", n_run), ("stream", n_stream)):
    with open(f"{d}/{name}.txt", "wb") as f:
        for s in range(0, n, 1 << 22):
            f.write((rng.integers(0, 2, min(1 << 22, n - s), dtype=np.uint8) + 48).tobytes())
        f.write(b"\n")
EOF

timed() {  # name, command...: wall seconds into $OUT/times.txt, the command's stdout kept
  local name=$1; shift
  local t0 t1 rc
  t0=$(date +%s%N)
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  rc=$?
  t1=$(date +%s%N)
  echo "$name rc=$rc wall_ms=$(( (t1 - t0) / 1000000 ))" | tee -a "$OUT/times.txt"
}
: > "$OUT/times.txt"

log "run -o OUT.npy at n = $N_RUN: CPU, then $DEVICE (compiled PARITY)"
timed run_cpu $HS run "$W/parity.safetensors" --input-file "$W/run.txt" -o "$W/cpu.npy" --json
timed run_gpu $HS run "$W/parity.safetensors" --input-file "$W/run.txt" -o "$W/gpu.npy" --json --device "$DEVICE"
timed run_json_gpu $HS run "$W/parity.safetensors" --input-file "$W/run.txt" --json --device "$DEVICE"
$PY -c "import numpy as np; a=np.load('$W/cpu.npy'); b=np.load('$W/gpu.npy'); print('run: max |cpu-gpu| =', float(abs(a-b).max()), '| decisions equal:', bool(((a>0.5)==(b>0.5)).all()))" | tee -a "$OUT/times.txt"

log "run --stream at n = $N_STREAM (compiled MAJORITY) on $DEVICE, and reading the file"
cat > "$W/read.py" <<'EOF'
import sys, numpy as np  # the floor: read the file in the stream's chunks, one prefix sum each
carry = 0
with open(sys.argv[1], "rb") as f:
    while chunk := f.read(1 << 16):
        carry = int(np.cumsum(np.frombuffer(chunk, np.uint8) - 48, dtype=np.int64)[-1]) + carry
EOF
timed read_file $PY "$W/read.py" "$W/stream.txt"
timed stream_gpu $HS run "$W/majority.safetensors" --stream --input-file "$W/stream.txt" -o "$W/stream.npy" --json --device "$DEVICE"
$PY - "$W" <<'EOF' | tee -a "$OUT/times.txt"
import sys, numpy as np
d = sys.argv[1]
bits = np.fromfile(f"{d}/stream.txt", dtype=np.uint8)[:-1] - 48
ones = np.cumsum(bits, dtype=np.int64)
truth = ones > np.arange(1, len(bits) + 1) - ones
out = np.load(f"{d}/stream.npy", mmap_mode="r")
print("stream: mismatching positions:", int(((out[:, 0] > 0.5) != truth).sum()), "of", len(bits))
EOF

log "check_dyck, model_forward, train_throughput on $DEVICE"
( cd benchmarks && $PY check_dyck.py --device "$DEVICE" $CHECK_DYCK_ARGS ) > "$OUT/check_dyck.txt" 2>&1
echo "check_dyck rc=$?" >> "$OUT/times.txt"
( cd benchmarks && $PY model_forward.py --device "$DEVICE" $MODEL_FORWARD_ARGS ) > "$OUT/model_forward.txt" 2>&1
echo "model_forward rc=$?" >> "$OUT/times.txt"
for lang in parity dyck2; do
  ( cd benchmarks && $PY train_throughput.py --device "$DEVICE" --steps "$STEPS" --language "$lang" --rounds 3 ) \
    > "$OUT/train_$lang.txt" 2>&1; echo "train_throughput $lang rc=$?" >> "$OUT/times.txt"
done

log "writing $GPU_MD"
$PY - "$OUT" "$GPU_MD" <<'EOF'
import sys
from pathlib import Path
out = Path(sys.argv[1])
lines = ["# GPU checks and benchmarks (benchmarks/gpu_check.sh)", "",
         "Written by the script from its own output (raw files: benchmarks/results/gpu-raw/).", "",
         "```", (out / "env.txt").read_text().strip(), "```", "",
         "## make test-gpu", "", "```", (out / "test-gpu.txt").read_text().strip()[-3000:], "```", "",
         "## Timings", "", "```", (out / "times.txt").read_text().strip(), "```", ""]
for name in ("check_dyck", "model_forward", "train_parity", "train_dyck2"):
    text = (out / f"{name}.txt").read_text() if (out / f"{name}.txt").exists() else "(missing)"
    lines += [f"## {name}", "", "```", text.strip()[-4000:], "```", ""]
Path(sys.argv[2]).write_text("\n".join(lines))
EOF
log "done: $GPU_MD"
