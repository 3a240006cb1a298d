#!/bin/sh
# reproduce.sh re-runs every synthetic experiment of the TES paper (§5.1,
# §5.2, Appendices G and H) and BoTorch's protocol (docs/results/README.md) with
# `tesbo-host bench`, then copies the figures, tables and per-iteration CSVs
# into docs/results/<experiment>/. Run it from the repository root:
#
#	docs/results/reproduce.sh [OUT]          # OUT defaults to out/bench
#	ONLY="fig5a fig10" docs/results/reproduce.sh   # just these experiments
#
# Every bench keeps its study database in OUT/<experiment>/studies.db (not
# committed: it is large and binary). Interrupted? Run the same command again:
# finished runs are skipped, partial runs resume. The log10P experiments
# (fig5b, fig6c, fig6ghi) need BROOMS: the directory of the paper's Broom's
# Barn survey (X_log10P.txt, Y_log10P.txt, hyperparameters_log10P.txt from
# the paper's release; not part of this repository).
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-out/bench}
BROOMS=${BROOMS:-}
for name in fig5b fig6c fig6ghi; do
	case " ${ONLY:-$name} " in *" $name "*)
		if [ -z "$BROOMS" ]; then
			echo "reproduce.sh: $name needs BROOMS=DIR, the Broom's Barn data directory (or leave it out with ONLY)" >&2
			exit 2
		fi ;;
	esac
done
BIN=${BIN:-/tmp/tesbo-host}
JOBS=${JOBS:-2}
go build -o "$BIN" ./cmd/tesbo-host

bench() { # bench NAME ARGS... — run one experiment and copy its results
	name=$1
	shift
	case " ${ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
	# --gp-prior weak: the GP prior these results were made with (the
	# default became the scaled prior afterwards).
	"$BIN" bench --kernel se "$@" --gp-prior weak --jobs "$JOBS" --out "$OUT/$name" --log-level warn
	mkdir -p "docs/results/$name"
	for f in "$OUT/$name"/*.md "$OUT/$name"/*.csv "$OUT/$name"/*.png; do
		[ -e "$f" ] && cp "$f" "docs/results/$name/"
	done
}

# App. G (Fig. 11): maximized TES_ep α against |B| for |X*| = 5.
bench appg --appg --problems synthetic/gpsample,synthetic/hartmann4 --batch 1-10 --trusted 5 --init 10 --seeds 10

# BoTorch's protocol (docs/results/README.md: Matérn-5/2, max(2,|B|) initial
# points, recommendation among evaluated points), and the same runs with the
# paper's recommendation (maximizer of the posterior mean).
for rec in evaluated refine; do
	bench anchors-q1-$rec --problems synthetic/branin,synthetic/hartmann3 --acqs tes-ep,tes-sp,ei,ucb,mes,pes,random \
		--seeds 3 --iters 30 --kernel matern52 --init 2 --init-batch --ucb-beta 2 --recommend $rec
	bench anchors-h6q4-$rec --problems synthetic/hartmann6 --acqs tes-ep,qei,ucb,mes,pes,random \
		--batch 4 --seeds 10 --iters 10 --kernel matern52 --init 2 --init-batch --ucb-beta 2 --recommend $rec
done

# Fig. 5a: GP sampled function, |B| = 1.
bench fig5a --problems synthetic/gpsample --acqs tes-sp,tes-ep,ei,ucb,mes,pes --seeds 10 --iters 50
# Fig. 10a/b (App. H): Branin and Hartmann-3, |B| = 1.
bench fig10 --problems synthetic/branin,synthetic/hartmann3 --acqs tes-sp,tes-ep,ei,ucb,mes,pes --seeds 10 --iters 50
# Fig. 6a/b: |B| = 3 on the GP sampled function and Hartmann-4.
bench fig6ab --problems synthetic/gpsample,synthetic/hartmann4 --acqs tes-sp,tes-ep,qei-cl,bucb,qei,lp-ei \
	--batch 3 --seeds 10 --iters 30
# Fig. 5b: log10P, |B| = 1 (noise σ_n² = 2.511e-2, the data set's).
bench fig5b --problems synthetic/log10p:noise_var=2.511e-2 --param data="$BROOMS" \
	--acqs tes-sp,tes-ep,ei,ucb,mes,pes --seeds 10 --iters 50
# Fig. 6c: log10P, |B| = 3.
bench fig6c --problems synthetic/log10p:noise_var=2.511e-2 --param data="$BROOMS" \
	--acqs tes-sp,tes-ep,qei-cl,bucb,qei,lp-ei --batch 3 --seeds 5 --iters 30
# Fig. 6d–f: |B| = 10, 20, 30 on the GP sampled function.
bench fig6def --problems synthetic/gpsample --acqs tes-ep,qei-cl,bucb,qei,lp-ei --batch 10,20,30 --seeds 5 --iters 20
# Fig. 6g–i: log10P, |B| = 10, 20, 40.
bench fig6ghi --problems synthetic/log10p:noise_var=2.511e-2 --param data="$BROOMS" \
	--acqs tes-ep,qei-cl,bucb,qei,lp-ei --batch 10,20,40 --seeds 5 --iters 20
