#!/usr/bin/env bash
# CI for the Slurm epilog (contrib/slurm/cudnnlog-epilog) on a real,
# single-node Slurm: Debian's slurm-wlm, slurmdbd, munge and MariaDB
# (installed when missing), a slurm.conf for this host in a temporary
# directory, munged, MariaDB, slurmdbd, slurmctld and slurmd started by hand
# (no systemd), then jobs submitted with sbatch whose scripts replay real
# failure logs. Asserts what the epilog wrote (the spool file, the job's
# comment in accounting, its own log) and that it exits 0 whatever goes
# wrong. Every daemon it started is stopped on exit. Run as root from
# anywhere; re-runnable.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
started=$(date +%s)

# slurmdbd and MariaDB too: EpilogSlurmctld runs once the job has finished,
# when slurmctld refuses `scontrol update` of it, so the epilog's comment
# goes to the accounting database (sacctmgr) and is read back with sacct.
need=()
for cmd in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge \
    slurmdbd:slurmdbd mariadbd:mariadb-server; do
    command -v "${cmd%%:*}" >/dev/null 2>&1 || need+=("${cmd#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm "${need[@]}"
fi

cargo build -p cudnnlog-cli
cudnnlog="$repo/target/debug/cudnnlog"
epilog="$repo/contrib/slurm/cudnnlog-epilog"

tmp=$(mktemp -d /tmp/cudnnlog-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
stop_all() {
    local rc=$? pid
    set +e
    # In reverse order of starting: slurmd, slurmctld, slurmdbd, MariaDB, munged.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        pid=${pids[i]}
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null
    done
    if [ "$rc" -ne 0 ]; then
        for f in "$tmp"/log/*; do
            [ -f "$f" ] || continue
            echo "===== $f"
            tail -n 40 "$f"
        done
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

fail() {
    echo "slurm.sh: FAIL: $*" >&2
    exit 1
}

# Waits up to $1 tenths of a second for the command that follows to succeed.
wait_for() {
    local n=$1
    shift
    for _ in $(seq "$n"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

host=$(hostname -s)
mkdir -p "$tmp"/{log,state,spool,munge,jobs,cudnnlog-spool,mysql}
chmod 711 "$tmp/munge"

# munge: a fresh key and a socket of our own (a system munged, if any, is
# left alone).
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
sock="$tmp/munge/munge.socket"
munged --force --key-file="$tmp/munge/munge.key" --socket="$sock" \
    --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
    --log-file="$tmp/log/munged.log"
wait_for 50 test -s "$tmp/munge/munged.pid" || fail "munged did not start"
pids+=("$(cat "$tmp/munge/munged.pid")")
munge --socket="$sock" -n </dev/null | unmunge --socket="$sock" >/dev/null ||
    fail "munge does not round-trip"

# MariaDB on a port of its own (no password checks: it listens on loopback
# for this test only).
mariadb-install-db --no-defaults --user=root --datadir="$tmp/mysql/data" \
    --auth-root-authentication-method=normal --skip-test-db \
    >"$tmp/log/mariadb-install.log" 2>&1 || fail "mariadb-install-db failed"
mariadbd --no-defaults --user=root --datadir="$tmp/mysql/data" \
    --socket="$tmp/mysql/mysql.sock" --port=46819 --bind-address=127.0.0.1 \
    --skip-grant-tables --pid-file="$tmp/mysql/mariadb.pid" \
    --log-error="$tmp/log/mariadb.log" &
pids+=("$!")
wait_for 300 mariadb --no-defaults -h 127.0.0.1 -P 46819 -u root -e 'select 1' ||
    fail "MariaDB did not start"

# The epilog runs with the environment slurmctld gives it (no PATH, no
# SLURM_CONF): its configuration file sets what this cluster needs, as a
# site's /etc/slurm/cudnnlog-epilog.conf would. TEST_EPILOG_CONF lets a
# test swap it.
cat >"$tmp/cudnnlog-epilog.conf" <<EOF
SLURM_CONF=$tmp/slurm.conf
export SLURM_CONF
CUDNNLOG_BIN=$cudnnlog
CUDNNLOG_SPOOL=$tmp/cudnnlog-spool
CUDNNLOG_EPILOG_LOG=$tmp/log/cudnnlog-epilog.log
EOF
cat >"$tmp/epilog-wrapper" <<EOF
#!/bin/sh
CUDNNLOG_EPILOG_CONF=$tmp/cudnnlog-epilog.conf exec $epilog
EOF
chmod 755 "$tmp/epilog-wrapper"

mem=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
cat >"$tmp/slurm.conf" <<EOF
ClusterName=cudnnlogci
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=46817
SlurmdPort=46818
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=46820
AccountingStoragePass=socket=$sock
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
MpiDefault=none
EpilogSlurmctld=$tmp/epilog-wrapper
NodeName=$host CPUs=1 RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$tmp/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$sock
DbdHost=localhost
DbdPort=46820
SlurmUser=root
PidFile=$tmp/slurmdbd.pid
LogFile=$tmp/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=46819
StorageUser=root
StorageLoc=cudnnlog_slurm_acct
EOF
chmod 600 "$tmp/slurmdbd.conf"
export SLURM_CONF="$tmp/slurm.conf"

slurmdbd
wait_for 100 test -s "$tmp/slurmdbd.pid" || fail "slurmdbd did not start"
pids+=("$(cat "$tmp/slurmdbd.pid")")
wait_for 50 timeout 20 sacctmgr -i add cluster cudnnlogci || true
sacctmgr -n list cluster format=cluster | grep -q cudnnlogci || fail "cluster not registered"

slurmctld -i -f "$SLURM_CONF"
wait_for 100 test -s "$tmp/slurmctld.pid" || fail "slurmctld did not start"
pids+=("$(cat "$tmp/slurmctld.pid")")
slurmd -f "$SLURM_CONF"
wait_for 100 test -s "$tmp/slurmd.pid" || fail "slurmd did not start"
pids+=("$(cat "$tmp/slurmd.pid")")
node_idle() { [ "$(sinfo -h -n "$host" -o %t)" = idle ]; }
wait_for 600 node_idle || fail "node $host is not idle: $(sinfo -h -n "$host" -o %t)"
echo "slurm.sh: Slurm $(sinfo -V | cut -d' ' -f2) up, node $host idle after $(($(date +%s) - started)) s"

cd "$tmp/jobs"
spool="$tmp/cudnnlog-spool"
elog="$tmp/log/cudnnlog-epilog.log"

# Submits a batch script (standard input) with the sbatch options given;
# prints the job id.
submit() {
    sbatch --parsable "$@"
}

# Waits until the job has ended and its EpilogSlurmctld has run (the job is
# no longer completing, and the epilog's log names the job).
wait_job() {
    local id=$1 state
    for _ in $(seq 600); do
        state=$(scontrol show job "$id" 2>/dev/null | sed -n 's/^ *JobState=\([A-Z_]*\).*/\1/p')
        case $state in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL)
            if [ -f "$spool/$id.json" ] || grep -q " job $id: " "$elog" 2>/dev/null ||
                [ "${2:-}" = quiet ]; then
                return 0
            fi
            ;;
        esac
        sleep 0.1
    done
    fail "job $id did not end (state '$state')"
}

# The JSON file's top-level string field $2 (the epilog writes them one a
# line; the full parse is in check_json).
field() {
    sed -n "s/^  \"$2\": \"\\(.*\\)\",\$/\\1/p" "$1" | head -n 1
}

check_json() {
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" ||
        fail "$1 is not valid JSON"
}

comment_of() {
    sacct -n -X -j "$1" -o Comment%300 | sed 's/ *$//; s/^ *//'
}

# 1. A job that fails like the real H200 run: its output (stdout, the
#    traceback on stderr, as Python writes them) replayed, then exit 1.
oom="$repo/fixtures/real/h200-torch-oom-amp-train.log"
split=$(grep -n -m1 '^Traceback' "$oom" | cut -d: -f1)
cat >oom.sh <<EOF
#!/bin/bash
head -n $((split - 1)) '$oom'
tail -n +$split '$oom' >&2
exit 1
EOF
id1=$(submit -J oom-train -o "$tmp/jobs/%x-%j.out" -e "$tmp/jobs/%x-%j.err" oom.sh)
wait_job "$id1"
v="$spool/$id1.json"
[ -f "$v" ] || fail "no verdict for failed job $id1: $(cat "$elog")"
check_json "$v"
[ "$(field "$v" outcome)" = failed ] || fail "job $id1: outcome '$(field "$v" outcome)', not failed"
[ "$(field "$v" primary)" = cuda.oom ] || fail "job $id1: primary '$(field "$v" primary)', not cuda.oom"
[ "$(field "$v" exit_code)" = 1:0 ] || fail "job $id1: exit_code '$(field "$v" exit_code)'"
grep -q "\"$tmp/jobs/oom-train-$id1.out\", \"$tmp/jobs/oom-train-$id1.err\"" "$v" ||
    fail "job $id1: the verdict does not name both expanded output files"
c1=$(comment_of "$id1")
case $c1 in "cudnnlog: failed cuda.oom"*) ;; *) fail "job $id1: comment '$c1'" ;; esac
[ "$c1" = "$(field "$v" comment)" ] || fail "job $id1: comment '$c1' is not the verdict's"
# The report's action (retry, stop, investigate: a failed job has one) and
# its reason are on the verdict and in the comment.
act=$(sed -n '/^  "report": {/,$p' "$v" | sed -n 's/^    "action": "\(.*\)",$/\1/p')
why=$(sed -n '/^  "report": {/,$p' "$v" | sed -n 's/^    "retryable_because": "\(.*\)",$/\1/p')
case $act in retry | stop | investigate) ;; *) fail "job $id1: the report's action is '$act'" ;; esac
[ -n "$why" ] || fail "job $id1: the report gives no retryable_because"
[ "$(field "$v" action)" = "$act" ] || fail "job $id1: action '$(field "$v" action)', report's '$act'"
[ "$(field "$v" retryable_because)" = "$why" ] || fail "job $id1: retryable_because differs from the report's"
case $c1 in "cudnnlog: failed cuda.oom $act ("*) ;; *) fail "job $id1: comment '$c1' lacks the action '$act'" ;; esac
echo "slurm.sh: job $id1 (CUDA OOM): comment '$c1'"

# 2. A distributed failure: the two-GPU NCCL watchdog timeout, where rank 1
#    is at fault though rank 0 reports it; default output file name, and
#    a comment of the user's own, which is kept.
nccl="$repo/fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log"
printf '#!/bin/bash\ncat %q\nexit 1\n' "$nccl" >nccl.sh
id2=$(submit -J nccl --comment "run 7, lr 3e-4" nccl.sh)
wait_job "$id2"
v2="$spool/$id2.json"
[ -f "$v2" ] || fail "no verdict for failed job $id2: $(cat "$elog")"
check_json "$v2"
[ "$(field "$v2" primary)" = nccl.timeout ] || fail "job $id2: primary '$(field "$v2" primary)'"
[ "$(field "$v2" rank)" = 1 ] || fail "job $id2: rank '$(field "$v2" rank)', not 1"
c2=$(comment_of "$id2")
case $c2 in "run 7, lr 3e-4 | cudnnlog: failed nccl.timeout rank 1"*) ;; *) fail "job $id2: comment '$c2'" ;; esac
echo "slurm.sh: job $id2 (NCCL timeout): comment '$c2'"

# 3. A job that succeeds leaves no verdict and no comment (default mode),
#    even though its output is a real log with warnings in it.
printf '#!/bin/bash\ncat %q\n' "$repo/fixtures/real/h200-torch-healthy-train.log" >ok.sh
id3=$(submit -J ok ok.sh)
wait_job "$id3" quiet
sleep 2
[ ! -e "$spool/$id3.json" ] || fail "job $id3 succeeded but has a verdict"
[ -z "$(comment_of "$id3")" ] || fail "job $id3 succeeded but has a comment"
! grep -q " job $id3: " "$elog" || fail "the epilog logged about successful job $id3"
#    With CUDNNLOG_WHEN=always, the same job (run by hand with the
#    environment slurmctld gave it) gets a verdict, and it is not failed.
env -i SLURM_JOB_ID="$id3" SLURM_JOB_EXIT_CODE=0 SLURM_JOB_DERIVED_EC=0 \
    SLURM_JOB_EXIT_CODE2=0:0 SLURM_JOB_WORK_DIR="$tmp/jobs" SLURM_JOB_NAME=ok \
    CUDNNLOG_EPILOG_CONF="$tmp/cudnnlog-epilog.conf" CUDNNLOG_WHEN=always CUDNNLOG_COMMENT=none \
    "$epilog" || fail "the epilog exited $? with CUDNNLOG_WHEN=always"
check_json "$spool/$id3.json"
case $(field "$spool/$id3.json" outcome) in clean | degraded) ;; *)
    fail "job $id3: outcome '$(field "$spool/$id3.json" outcome)' with CUDNNLOG_WHEN=always"
    ;;
esac
grep -q "\"files\": \\[\"$tmp/jobs/slurm-$id3.out\"\\]" "$spool/$id3.json" ||
    fail "job $id3: the default output file slurm-$id3.out is not the one read"

# 4. The output file is unreadable (removed by the job itself): the epilog
#    exits 0, writes a verdict with an error and logs why.
printf '#!/bin/bash\necho doomed\nrm -f %q\nexit 2\n' "$tmp/jobs/gone.out" >gone.sh
id4=$(submit -J gone -o "$tmp/jobs/gone.out" gone.sh)
wait_job "$id4"
check_json "$spool/$id4.json"
grep -q '"error": "no readable output file' "$spool/$id4.json" ||
    fail "job $id4: no error in its verdict"
grep -q " job $id4: output file $tmp/jobs/gone.out is missing or unreadable" "$elog" ||
    fail "job $id4: the epilog did not log the missing file"

# 5. cudnnlog is missing: the epilog still exits 0 (run by hand, as
#    slurmctld runs it, against job 1's record; its exit status is checked).
env -i SLURM_JOB_ID="$id1" SLURM_JOB_EXIT_CODE=256 SLURM_JOB_DERIVED_EC=0 \
    SLURM_JOB_EXIT_CODE2=1:0 SLURM_JOB_WORK_DIR="$tmp/jobs" \
    SLURM_JOB_STDOUT="$tmp/jobs/%x-%j.out" SLURM_JOB_NAME=oom-train \
    CUDNNLOG_EPILOG_CONF="$tmp/cudnnlog-epilog.conf" CUDNNLOG_BIN=/nonexistent/cudnnlog \
    CUDNNLOG_SPOOL="$tmp/spool-missing-bin" "$epilog" ||
    fail "the epilog exited $? without cudnnlog"
grep -q '"error": "cudnnlog binary /nonexistent/cudnnlog is not executable"' \
    "$tmp/spool-missing-bin/$id1.json" || fail "no error verdict without cudnnlog"

# 6. An output "file" that is a directory, an unwritable spool and log
#    file: still 0, and the problems said on standard error.
env -i SLURM_JOB_ID="$id1" SLURM_JOB_EXIT_CODE=256 SLURM_JOB_WORK_DIR="$tmp/jobs" \
    SLURM_JOB_STDOUT="$tmp/jobs" CUDNNLOG_EPILOG_CONF=/dev/null \
    CUDNNLOG_SPOOL=/proc/cudnnlog-spool CUDNNLOG_EPILOG_LOG=/proc/cudnnlog.log \
    CUDNNLOG_BIN="$cudnnlog" "$epilog" 2>"$tmp/log/stderr-6.log" ||
    fail "the epilog exited $? with nowhere to write"
grep -q 'cannot create spool directory /proc/cudnnlog-spool' "$tmp/log/stderr-6.log" ||
    fail "the epilog did not say on stderr that it could not write"

# 7. Without the output file names in the environment (older Slurm), the
#    epilog asks scontrol; and a scan that outlives CUDNNLOG_TIMEOUT is
#    stopped, the epilog still exiting 0 in time.
env -i SLURM_CONF="$SLURM_CONF" SLURM_JOB_ID="$id1" SLURM_JOB_EXIT_CODE=256 \
    CUDNNLOG_EPILOG_CONF=/dev/null CUDNNLOG_BIN="$cudnnlog" \
    CUDNNLOG_SPOOL="$tmp/spool-scontrol" CUDNNLOG_EPILOG_LOG="$elog" CUDNNLOG_COMMENT=none \
    "$epilog" || fail "the epilog exited $? via scontrol"
cmp <(sed -n '/"report"/,$p' "$tmp/spool-scontrol/$id1.json") <(sed -n '/"report"/,$p' "$v") ||
    fail "the verdict via scontrol differs from the one via the environment"
printf '#!/bin/sh\nexec sleep 30\n' >"$tmp/slow-cudnnlog"
chmod 755 "$tmp/slow-cudnnlog"
t0=$(date +%s)
env -i SLURM_JOB_ID="$id1" SLURM_JOB_EXIT_CODE=256 SLURM_JOB_WORK_DIR="$tmp/jobs" \
    SLURM_JOB_STDOUT="$tmp/jobs/oom-train-$id1.out" CUDNNLOG_EPILOG_CONF=/dev/null \
    CUDNNLOG_BIN="$tmp/slow-cudnnlog" CUDNNLOG_TIMEOUT=2 CUDNNLOG_SPOOL="$tmp/spool-slow" \
    CUDNNLOG_EPILOG_LOG="$elog" "$epilog" || fail "the epilog exited $? on a slow scan"
[ $(($(date +%s) - t0)) -lt 15 ] || fail "the epilog took $(($(date +%s) - t0)) s with CUDNNLOG_TIMEOUT=2"
grep -q '"error": "cudnnlog scan timed out after 2s"' "$tmp/spool-slow/$id1.json" ||
    fail "no timeout error in the verdict"

# 8. What slurmctld itself says to `scontrol update` of a finished job: the
#    reason the comment goes through accounting (CUDNNLOG_COMMENT=scontrol
#    logs the refusal, and the epilog still exits 0).
env -i SLURM_CONF="$SLURM_CONF" SLURM_JOB_ID="$id2" SLURM_JOB_EXIT_CODE=256 \
    SLURM_JOB_WORK_DIR="$tmp/jobs" CUDNNLOG_EPILOG_CONF=/dev/null CUDNNLOG_BIN="$cudnnlog" \
    CUDNNLOG_SPOOL="$tmp/spool-scontrol" CUDNNLOG_EPILOG_LOG="$elog" CUDNNLOG_COMMENT=scontrol \
    "$epilog" || fail "the epilog exited $? with CUDNNLOG_COMMENT=scontrol"
grep -q " job $id2: scontrol could not set the comment: .*already finished" "$elog" ||
    fail "no refusal from scontrol logged"

echo "slurm.sh: epilog log:"
sed 's/^/  /' "$elog"
echo "slurm.sh: sacct -X -j $id1,$id2,$id3,$id4 -o JobID,JobName,State,ExitCode,Comment%-130"
sacct -X -j "$id1,$id2,$id3,$id4" -o JobID,JobName,State,ExitCode,Comment%-130 | sed 's/^/  /'
echo "slurm.sh: verdict of job $id1 (head):"
head -n 18 "$v" | sed 's/^/  /'
echo "slurm.sh: verdict of job $id2 (head):"
head -n 18 "$v2" | sed 's/^/  /'
echo "slurm.sh: verdict of job $id4:"
sed 's/^/  /' "$spool/$id4.json"
echo "slurm.sh: OK in $(($(date +%s) - started)) s"
