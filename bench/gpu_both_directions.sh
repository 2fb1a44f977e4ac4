#!/usr/bin/env bash
# Both directions' round-3 training side by side on one lent GPU, in one call of under 10 minutes
# (issue 39 item 6): each direction's shipped model continued on its recipe's real + synthetic
# data (configs/{hien,enhi}_bt_d256_L3.yaml), larger batches than on the CPU, averaged, exported
# (float16), scored on NTREX-128 dev. Carry .gpu/wheels and .gpu/both.tar.xz, made here with
#   anuvad data pack --config configs/enhi_bt_d256_L3.yaml --config configs/hien_bt_d256_L3.yaml \
#       --out .gpu/both.tar.xz --level 9          (data/synthetic/ from make synthetic*)
# What comes back in $OUT: each model in parts (cat NAME.pt.part* > NAME.pt) and logs.tgz (the
# runs' train.log and metrics.jsonl, the dev scores and hypotheses, the recipe reports).
set -euo pipefail
export PYTHONUNBUFFERED=1
MINUTES=${MINUTES:-9.0}      # this call's wall clock for each direction, evaluation included
TRAIN=${TRAIN:-5.0}          # training minutes of each direction
DEVICE=${DEVICE:-cuda}      # cpu: the same flow slowly, to try it before a lease
OUT=${OUT:-runs/gpu-out}
site=/tmp/anuvad-site data=/tmp/anuvad-data back=/tmp/anuvad-back
python3 -m pip install --quiet --no-index --no-deps --target "$site" .gpu/wheels/*.whl
export PYTHONPATH="src:$site"
test -d "$data" || python3 -m anuvad.cli.main data unpack .gpu/both.tar.xz --to "$data"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
settings=(data.max_tokens=8192 train.lr_scale=0.4 train.save_every=200 train.keep_last=20
          train.valid_every=1000)
mkdir -p "$back"
python3 bench/recipe_gpu.py "${settings[@]}" --only hien hien-eval --work runs/gpu-hien \
    --out "$back/h" --device "$DEVICE" --minutes "$MINUTES" --hien-minutes "$TRAIN" --data "$data" --hien-extra \
    > "$back/hien.log" 2>&1 &
python3 bench/recipe_gpu.py "${settings[@]}" --only enhi enhi-eval --work runs/gpu-enhi \
    --out "$back/e" --device "$DEVICE" --minutes "$MINUTES" --enhi-minutes "$TRAIN" --data "$data" \
    > "$back/enhi.log" 2>&1 &
wait || true
mkdir -p "$OUT"
find "$back" -name '*.pt.part*' -exec mv {} "$OUT/" \;
find "$back" -name '*.pt' -exec mv {} "$OUT/" \;
for run in hien enhi; do
    cp "runs/gpu-$run/$run/train.log" "$back/$run.train.log" 2>/dev/null || true
    cp "runs/gpu-$run/$run/metrics.jsonl" "$back/$run.metrics.jsonl" 2>/dev/null || true
done
tar czf "$OUT/logs.tgz" -C "$back" .
tail -n 8 "$back/hien.log" "$back/enhi.log"
ls -la "$OUT"
