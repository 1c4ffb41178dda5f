#!/usr/bin/env bash
# Submit the sweep array and its merge, chained: the merge runs only if every task succeeded.
#   EXPERIMENT=experiments/my-sweep.ron OUT=/scratch/$USER/my-sweep deploy/slurm/submit.sh
# Extra arguments go to the array's sbatch (e.g. --array=1-100 --partition=batch).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable "$@" "$here/sweep.sbatch")
array=${array%%;*}   # --parsable prints "jobid[;cluster]"
merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes "$here/merge.sbatch")
echo "submitted array $array and merge ${merge%%;*}"
