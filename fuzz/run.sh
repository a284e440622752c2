#!/usr/bin/env bash
# Builds the fuzz targets and runs each for a while; prints one line per
# target at the end.
#
#   fuzz/run.sh [options] SECONDS WORKERS [TARGET...] [-- LIBFUZZER_FLAG...]
#
# SECONDS    how long each target runs (-max_total_time)
# WORKERS    libFuzzer processes per target: 1 runs one process; N > 1
#            passes -jobs=N -workers=N (N jobs at once, each SECONDS long)
# TARGET...  default: every [[bin]] in fuzz/Cargo.toml (framer scan stream
#            decode); with --bin-dir, every executable there
# after --   more flags for libFuzzer (e.g. -rss_limit_mb=4096 -dict=...)
#
# Options (each also an environment variable):
#   --build-only                           build, run nothing (no SECONDS
#                                          WORKERS needed)
#   --no-build           FUZZ_NO_BUILD=1   run the binaries already built
#   --bin-dir DIR        FUZZ_BIN_DIR=DIR  where the binaries are (implies
#                        --no-build); default
#                        fuzz/target/x86_64-unknown-linux-gnu/release
#   --work-dir DIR       FUZZ_WORK_DIR=DIR where corpus/<target>/,
#                        artifacts/<target>/ and logs/<target>/ go;
#                        default the fuzz/ directory
#   --fixtures DIR       FUZZ_FIXTURES=DIR what an empty corpus is seeded
#                        from (*.log, *.txt under 64 KiB, and for decode
#                        *.gz, *.zst, and gzipped logs); default the
#                        repository's fixtures/ (none there: empty corpus)
#   --max-len N          FUZZ_MAX_LEN=N    -max_len (default 65536)
#
# Building needs cargo, the nightly toolchain and cargo-fuzz:
#   cargo +nightly fuzz build -O --debug-assertions
# Running needs only the binaries (ASan is linked in) and bash, find,
# grep, awk; gzip for the gzipped decode seeds (skipped without it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

no_build="${FUZZ_NO_BUILD:-}"
bin_dir="${FUZZ_BIN_DIR:-}"
work_dir="${FUZZ_WORK_DIR:-$here}"
fixtures="${FUZZ_FIXTURES:-$here/../fixtures}"
max_len="${FUZZ_MAX_LEN:-65536}"

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

positional=()
extra=()
build_only=
while [ $# -gt 0 ]; do
    case "$1" in
    --no-build | --prebuilt) no_build=1 ;;
    --build-only) build_only=1 ;;
    --bin-dir) bin_dir="${2:?--bin-dir DIR}"; shift ;;
    --bin-dir=*) bin_dir="${1#*=}" ;;
    --work-dir) work_dir="${2:?--work-dir DIR}"; shift ;;
    --work-dir=*) work_dir="${1#*=}" ;;
    --fixtures) fixtures="${2:?--fixtures DIR}"; shift ;;
    --fixtures=*) fixtures="${1#*=}" ;;
    --max-len) max_len="${2:?--max-len N}"; shift ;;
    --max-len=*) max_len="${1#*=}" ;;
    -h | --help) usage ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "run.sh: unknown option $1" >&2; usage ;;
    *) positional+=("$1") ;;
    esac
    shift
done
if [ -n "$build_only" ]; then
    positional=(0 1 "${positional[@]}")
    no_build=
fi
[ ${#positional[@]} -ge 2 ] || usage
seconds="${positional[0]}"
workers="${positional[1]}"
targets=("${positional[@]:2}")
if [ ${#targets[@]} -eq 0 ]; then
    # Every [[bin]] of fuzz/Cargo.toml; without it (binaries copied to
    # another machine), every executable in the binary directory.
    if [ -f "$here/Cargo.toml" ] && [ -z "$bin_dir" ]; then
        mapfile -t targets < <(awk '/^\[\[bin\]\]/ { b = 1; next } /^\[/ { b = 0 }
            b && $1 == "name" { gsub(/[" ]/, "", $3); print $3 }' "$here/Cargo.toml")
    else
        mapfile -t targets < <(find "${bin_dir:-$here/target/x86_64-unknown-linux-gnu/release}" \
            -maxdepth 1 -type f -perm -u+x ! -name '*.*' -printf '%f\n' 2>/dev/null | sort)
    fi
    [ ${#targets[@]} -gt 0 ] || { echo "run.sh: no targets found" >&2; exit 2; }
fi
case "$seconds$workers" in *[!0-9]*) echo "run.sh: SECONDS and WORKERS are numbers" >&2; exit 2 ;; esac
[ "$workers" -ge 1 ] || { echo "run.sh: WORKERS is at least 1" >&2; exit 2; }

[ -n "$bin_dir" ] && no_build=1
bin_dir="${bin_dir:-$here/target/x86_64-unknown-linux-gnu/release}"
mkdir -p "$work_dir"
work_dir="$(cd "$work_dir" && pwd)"

if [ -z "$no_build" ]; then
    echo "== building ${targets[*]}" >&2
    for t in "${targets[@]}"; do
        (cd "$here" && cargo +nightly fuzz build -O --debug-assertions "$t")
    done
fi
for t in "${targets[@]}"; do
    [ -x "$bin_dir/$t" ] || { echo "run.sh: no binary $bin_dir/$t" >&2; exit 2; }
done
if [ -n "$build_only" ]; then
    echo "built: $(cd "$bin_dir" && ls -d "${targets[@]}" | sed "s|^|$bin_dir/|" | tr '\n' ' ')"
    exit 0
fi
# -max_total_time=0 would mean no limit.
[ "$seconds" -ge 1 ] || { echo "run.sh: SECONDS is at least 1" >&2; exit 2; }

# Small fixtures (under 64 KiB, so that -max_len keeps them whole) of the
# given name patterns, NUL-separated.
small_files() {
    [ -d "$fixtures" ] || return 0
    local args=() p
    for p in "$@"; do args+=(-o -name "$p"); done
    find "$fixtures" -type f \( "${args[@]:1}" \) -size -65000c -print0 | sort -z
}

# Writes the 5 parameter bytes of a decode input (see decode.rs): flags,
# then a 32-bit seed.
decode_head() {
    printf "\\$(printf '%03o' "$1")\\$(printf '%03o' "$(($2 & 255))")\\001\\002\\003"
}

seed_corpus() {
    local t="$1" dir="$2" i=0 f
    if [ -d "$here/regressions" ]; then
        for f in "$here/regressions/$t"-* "$here/regressions/"*.log; do
            [ -f "$f" ] && cp "$f" "$dir/regression-$(basename "$f")"
        done
    fi
    case "$t" in
    decode)
        # The plain logs behind every mode (flags: mode in bits 0-2; I/O
        # failure, scan, read sizes above), and compressed files as they are.
        while IFS= read -r -d '' f; do
            i=$((i + 1))
            { decode_head $(( (i % 8) | ((i * 8) & 0xf8) )) "$i"; cat "$f"; } >"$dir/seed-$i"
            if command -v gzip >/dev/null && [ $((i % 4)) = 0 ]; then
                { decode_head $(( (i * 8) & 0xf8 )) "$i"; gzip -c -n "$f"; } >"$dir/seed-$i.gz"
            fi
        done < <(small_files '*.log' '*.txt')
        while IFS= read -r -d '' f; do
            i=$((i + 1))
            { decode_head $(( (i * 8) & 0xf8 )) "$i"; cat "$f"; } >"$dir/seed-$i-$(basename "$f")"
        done < <(small_files '*.gz' '*.zst')
        ;;
    stream)
        # The 4 parameter bytes (see stream.rs) first, so the log is whole.
        while IFS= read -r -d '' f; do
            i=$((i + 1))
            { printf "\\$(printf '%03o' $(( (i * 37) & 255 )))\\$(printf '%03o' $((i & 255)))\\001\\200"; cat "$f"; } >"$dir/seed-$i"
        done < <(small_files '*.log' '*.txt')
        ;;
    *)
        while IFS= read -r -d '' f; do
            i=$((i + 1))
            cp "$f" "$dir/seed-$i-$(basename "$f")"
        done < <(small_files '*.log' '*.txt')
        ;;
    esac
}

# Failure artifacts in a directory (newer than a file, if given: an input
# found again is written again, under the same name).
count_failures() {
    find "$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) \
        ${2:+-newer "$2"} | wc -l
}

summary=()
status=0
for t in "${targets[@]}"; do
    corpus="$work_dir/corpus/$t"
    artifacts="$work_dir/artifacts/$t"
    logs="$work_dir/logs/$t"
    mkdir -p "$corpus" "$artifacts" "$logs"
    if [ -z "$(ls -A "$corpus")" ]; then
        seed_corpus "$t" "$corpus"
        echo "== $t: seeded $(ls "$corpus" | wc -l) inputs into $corpus" >&2
    fi
    rm -f "$logs"/fuzz-*.log
    marker="$logs/.started"
    touch "$marker"
    sleep 1 # mtimes have a resolution of a second on some file systems
    flags=(-max_total_time="$seconds" -max_len="$max_len" -print_final_stats=1
        -artifact_prefix="$artifacts/")
    echo "== $t: $seconds s, $workers worker(s); log in $logs" >&2
    start=$(date +%s)
    set +e
    if [ "$workers" -eq 1 ]; then
        (cd "$logs" && "$bin_dir/$t" "${flags[@]}" ${extra[@]+"${extra[@]}"} "$corpus" >"$logs/fuzz-0.log" 2>&1)
    else
        # libFuzzer writes each job's output to fuzz-<job>.log in its
        # working directory.
        (cd "$logs" && "$bin_dir/$t" "${flags[@]}" -jobs="$workers" -workers="$workers" \
            ${extra[@]+"${extra[@]}"} "$corpus" >"$logs/main.log" 2>&1)
    fi
    rc=$?
    set -e
    wall=$(( $(date +%s) - start ))
    found="$(count_failures "$artifacts" "$marker")"
    after="$(count_failures "$artifacts")"
    [ "$found" -gt 0 ] && status=1
    # Executions: the final stats of each process, or its last status line
    # (#N) if it died before printing them.
    execs=$(awk '
        FNR == 1 { if (f != "") total += (s != "" ? s : last); f = FILENAME; s = ""; last = 0 }
        /^stat::number_of_executed_units:/ { s = $2 }
        /^#[0-9]+/ { n = substr($1, 2) + 0; if (n > last) last = n }
        END { if (f != "") total += (s != "" ? s : last); print total + 0 }' "$logs"/fuzz-*.log)
    inputs=$(find "$corpus" -type f | wc -l)
    kib=$(du -sk "$corpus" | awk '{print $1}')
    rate=$(( wall > 0 ? execs / wall : execs ))
    kinds=""
    for k in crash oom timeout leak; do
        n=$(find "$artifacts" -maxdepth 1 -type f -name "$k-*" | wc -l)
        [ "$n" -gt 0 ] && kinds="$kinds $k=$n"
    done
    summary+=("$(printf '%-7s %5ss x%-2s executions %10s  exec/s %7s  corpus %6s inputs %8s KiB  failures this run %s, in artifacts %s%s  (exit %s)' \
        "$t" "$wall" "$workers" "$execs" "$rate" "$inputs" "$kib" "$found" "$after" "${kinds:+ (${kinds# })}" "$rc")")
done

echo
for line in "${summary[@]}"; do echo "$line"; done
exit "$status"
