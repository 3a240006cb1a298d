#!/bin/sh
# reproduce-real.sh runs the paper's two real-world experiments (§5.3) at
# the scale this 2-core machine allows — batch BO with TES_ep against qEI and
# random search at equal evaluation budgets — and copies the results into
# docs/results/{cnn,facerec}/. Run from the repository root:
#
#	docs/results/reproduce-real.sh facerec|cnn [OUT]   # OUT defaults to out/bench
#
# facerec attacks with the paper's attacker photo against the paper's 41-face
# gallery (dlib encodings) from FACE, the directory holding the paper's
# fr_gallery41_encodings.npy and test_image_sanjay_4.jpg (not part of this
# repository);
# cnn trains the plugin's CNN on Fashion-MNIST (Debian dataset-fashion-mnist).
# Interrupted? Run the same command again (finished runs are skipped).
set -eu
cd "$(dirname "$0")/../.."
what=$1
OUT=${2:-out/bench}
FACE=${FACE:-}
if [ "$what" = facerec ] && [ -z "$FACE" ]; then
	echo "reproduce-real.sh: facerec needs FACE=DIR, the directory of the paper's face-attack data" >&2
	exit 2
fi
BIN=${BIN:-/tmp/tesbo-host}
go build -o "$BIN" ./cmd/tesbo-host

copy() { # copy NAME — the bench's tables, CSV and figures into docs/results/NAME
	mkdir -p "docs/results/$1"
	for f in "$OUT/$1"/*.md "$OUT/$1"/*.csv "$OUT/$1"/*.png; do
		[ -e "$f" ] && cp "$f" "docs/results/$1/"
	done
}

case $what in
facerec)
	# Paper: |B| = 20, 10 initial points, 5 runs. Here: |B| = 20, 10 initial
	# points, 10 iterations (210 evaluations), 3 runs per acquisition.
	FP="--param gallery=$FACE/fr_gallery41_encodings.npy --param attacker=$FACE/test_image_sanjay_4.jpg"
	"$BIN" bench --kernel se --gp-prior weak --problems facerec --plugins ./plugins --acqs tes-ep,qei,random \
		--batch 20 --init 10 --seeds 3 --iters 10 $FP --param figure_dir="$OUT/facerec/best" \
		--jobs 1 --out "$OUT/facerec" --log-level warn
	copy facerec
	# fig8 reads the runs as the CLI prints them (not the database).
	mkdir -p "$OUT/facerec/trials"
	RUNS=""
	for acq in tes-ep qei random; do
		for s in 0 1 2; do
			st="bench/facerec/$acq/q20/s$s"
			"$BIN" trials --db "$OUT/facerec/studies.db" --study "$st" --format json > "$OUT/facerec/trials/$acq-s$s.jsonl"
			RUNS="$RUNS $st=$OUT/facerec/trials/$acq-s$s.jsonl"
		done
	done
	go run ./plugins/facerec/cmd/fig8 -out docs/results/facerec $FP $RUNS \
		> docs/results/facerec/fig8.md 2> "$OUT/facerec/fig8.log"
	;;
cnn)
	# Paper: CIFAR-10, |B| = 20, 10 initial points, 5 runs. Here: Fashion-MNIST
	# (5,000 training / 2,000 test images, one epoch, ≤ 20 s of training per
	# evaluation), |B| = 4, 10 initial points, 6 iterations (34 evaluations),
	# 2 runs per acquisition: one evaluation takes ~10–25 s on 2 cores.
	"$BIN" bench --kernel se --gp-prior weak --problems cnn --plugins ./plugins --acqs tes-ep,qei,random \
		--batch 4 --init 10 --seeds 2 --iters 6 --param train_size=5000 --param budget=20s \
		--jobs 1 --out "$OUT/cnn" --log-level warn
	copy cnn
	;;
*)
	echo "usage: $0 facerec|cnn [OUT]" >&2
	exit 2
	;;
esac
