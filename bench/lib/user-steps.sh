# shellcheck shell=bash
# bench/lib/user-steps.sh: the part of `make bench` that runs as the throwaway user,
# inside its own scripts/secret-session (gnome-keyring on a private bus, no terminal,
# the askpass program answering PAM). bench/run prepends the settings (OUT, VENV,
# ROUNDS, QUICK) and this file only drives the tools; bench/lib/report.py reads what
# it leaves in $OUT. Every timed pair runs interleaved (A B A B ...) in one process
# (spawn-timer), so that the machine's noise falls on both sides alike. STEPS names the
# steps this run takes (bench/run's BENCH_STEPS), each between spaces.
set -euo pipefail
step() { [[ "$STEPS" == *" $1 "* ]]; }
export PYTHON_KEYRING_BACKEND=keyring.backends.SecretService.Keyring
export SPAWN_TIMER_STDERR="$OUT/stderr.log"
say() { printf 'bench: %s\n' "$*" >&2; }
now() { printf '%s\n' "$EPOCHREALTIME"; }
small=$((ROUNDS / 5 > 10 ? ROUNDS / 5 : 10))

say "setting up: keychain, items of 32 bytes for keygate, secret-tool and python keyring"
keygate init >/dev/null 2>&1
keygate status --json >"$OUT/status.json"
head -c 24 /dev/urandom | base64 | tr -d '\n' >"$HOME/secret"           # 32 bytes
keygate add -s bench -a user <"$HOME/secret"
secret-tool store --label=bench service bench-st account user <"$HOME/secret"
"$VENV/bin/python" -c 'import keyring, sys; keyring.set_password("bench-py", "user", sys.stdin.read())' <"$HOME/secret"
printf %s "$(cat "$HOME/secret")" | keygate add -s bench -a gated --access user-presence
keygate get -s bench -a user | cmp -s - "$HOME/secret" || { say "keygate get returned other bytes"; exit 1; }
# The same item in the embedded store (the store chosen per command by KEYGATE_STORE).
KEYGATE_STORE=embedded keygate add -s bench -a embedded <"$HOME/secret"
KEYGATE_STORE=embedded keygate get -s bench -a embedded | cmp -s - "$HOME/secret" \
    || { say "keygate get (embedded) returned other bytes"; exit 1; }
if ((BASELINE)); then
    keygate-baseline get -s bench -a user | cmp -s - "$HOME/secret" || { say "the baseline's get returned other bytes"; exit 1; }
    if step profile && command -v perf >/dev/null 2>&1; then
        # Where a read's CPU goes, split by library: 40 reads of the plain item by each CLI
        # (perf's cpu-clock sampling, self time per shared object, then the top symbols).
        say "profile: perf record of 40 reads, this tree and the baseline"
        mkdir -p "$OUT/perf"
        # prof NAME COMMAND: 40 runs of COMMAND under perf, summarised into $OUT/perf/NAME.txt: self
        # time by library, the share of samples under the Swift runtime's type lookups, top symbols.
        prof() { local name=$1 cmd=$2
            perf record -q -F 20000 -g -o "$OUT/perf/$name.data" -- \
                sh -c "for i in \$(seq 40); do $cmd >/dev/null; done" >/dev/null 2>>"$OUT/stderr.log" || true
            { echo "# perf record -F 20000 -g of 40 x \`$cmd\`: self time by library"
              perf report -i "$OUT/perf/$name.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30
              echo
              perf script -i "$OUT/perf/$name.data" -F ip,sym 2>/dev/null | awk -v RS= '
                  { n++ } /swift_conformsToProtocol|swift_getTypeByMangledName|instantiateConcreteTypeFromMangledName/ { t++ }
                  END { if (n) printf "# samples with a Swift runtime type lookup (conformance scan, mangled-name metadata) on the stack: %.1f%% of %d\n", 100 * t / n, n }'
              echo; echo "# top symbols (self)"
              perf report -i "$OUT/perf/$name.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
            } >"$OUT/perf/$name.txt" || true   # head closes the pipe early: pipefail must not end the run
            rm -f "$OUT/perf/$name.data"
        }
        for k in keygate keygate-baseline; do
            prof "get-$k" "$k get -s bench -a user"
            prof "get-embedded-$k" "env KEYGATE_STORE=embedded $k get -s bench -a embedded"
        done
        prof version-keygate "keygate --version"
    fi
    if step profile && command -v valgrind >/dev/null 2>&1; then
        # The same reads as instruction counts, which repeat from run to run where samples do not:
        # one run of each under callgrind, split by the library each instruction ran in.
        say "profile: callgrind of one read by each CLI, split by library"
        mkdir -p "$OUT/callgrind"
        # cg_read NAME STORE COMMAND...: one run of COMMAND under callgrind, with KEYGATE_STORE=STORE
        # set for valgrind itself (`env` in front would exec the CLI outside callgrind).
        cg_read() { local name=$1 store=$2; shift 2
            KEYGATE_STORE=$store valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind/$name.cg" "$@" \
                >/dev/null 2>>"$OUT/stderr.log" || true; }
        for k in keygate keygate-baseline; do
            cg_read "$k-version" auto "$k" --version
            cg_read "$k-get" auto "$k" get -s bench -a user
            cg_read "$k-get-embedded" embedded "$k" get -s bench -a embedded
            # A gated read inside its reuse window (the daemon answers): the read first, outside
            # callgrind, opens the window if it is not open (askpass), so the profile is the cached path.
            "$k" get -s bench -a gated >/dev/null 2>>"$OUT/stderr.log" || true
            cg_read "$k-get-gated" auto "$k" get -s bench -a gated
        done
        python3 "$BENCH_LIB/callgrind-by-library.py" \
            "--version (before)=$OUT/callgrind/keygate-baseline-version.cg" "--version=$OUT/callgrind/keygate-version.cg" \
            "get (before)=$OUT/callgrind/keygate-baseline-get.cg" "get=$OUT/callgrind/keygate-get.cg" \
            "embedded get (before)=$OUT/callgrind/keygate-baseline-get-embedded.cg" \
            "embedded get=$OUT/callgrind/keygate-get-embedded.cg" \
            "gated get in its window (before)=$OUT/callgrind/keygate-baseline-get-gated.cg" \
            "gated get in its window=$OUT/callgrind/keygate-get-gated.cg" >"$OUT/perf/instructions-by-library.txt" \
            2>>"$OUT/stderr.log" || true
    fi
fi

if ((PROFILE)) && step profile && command -v valgrind >/dev/null 2>&1; then
    # Instruction counts (repeatable on a noisy machine): each program once under callgrind,
    # the library and the C floor over 100 calls after their first. callgrind_annotate's
    # inclusive summary of each is left in $OUT/profile/*.txt for docs/PERFORMANCE.md.
    say "profile: callgrind of keygate get, --version, secret-tool lookup, library-read, the C floor"
    mkdir -p "$OUT/profile"
    cg() { local name=$1; shift
        valgrind --tool=callgrind --callgrind-out-file="$OUT/profile/$name.cg" "$@" >/dev/null 2>"$OUT/profile/$name.log" || true
        callgrind_annotate --inclusive=yes "$OUT/profile/$name.cg" 2>/dev/null | head -60 >"$OUT/profile/$name.txt" || true; }
    cg keygate-get keygate get -s bench -a user
    cg keygate-version keygate --version
    cg secret-tool-lookup secret-tool lookup service bench-st account user
    cg library-read-1 library-read read bench user 1
    cg library-read-101 library-read read bench user 101
    cg c-floor-1 lookup-loop 1 keygate:class genp service bench account user
    cg c-floor-101 lookup-loop 101 keygate:class genp service bench account user
    if command -v library-read-baseline >/dev/null 2>&1; then
        cg library-read-baseline-1 library-read-baseline read bench user 1
        cg library-read-baseline-101 library-read-baseline read bench user 101
    fi
fi

if step cli; then
    say "CLI read and start-up: $ROUNDS interleaved rounds"
    # keygate-get-gated: user presence inside its reuse window (the warm-up round authenticates;
    # the scope is this spawn-timer, the parent of every round), through keygate-gatekeeper.
    # The embedded store's read is paired with --version under the same `env` (the ratio of
    # report.py's embedded-store goal); with BASELINE=1 the baseline CLI's reads run in the same
    # rounds (before/after, paired).
    baseline_runs=()
    if ((BASELINE)); then
        baseline_runs=(keygate-get-baseline keygate-baseline get -s bench -a user ---
                       keygate-get-gated-baseline keygate-baseline get -s bench -a gated ---
                       keygate-get-embedded-baseline env KEYGATE_STORE=embedded keygate-baseline get -s bench -a embedded ---)
    fi
    spawn-timer "$ROUNDS" 3 \
        keygate-get keygate get -s bench -a user --- \
        keygate-get-gated keygate get -s bench -a gated --- \
        secret-tool-lookup secret-tool lookup service bench-st account user --- \
        keygate-get-embedded env KEYGATE_STORE=embedded keygate get -s bench -a embedded --- \
        keygate-version-env env KEYGATE_STORE=embedded keygate --version --- \
        "${baseline_runs[@]}" \
        keygate-version keygate --version --- \
        true /bin/true >"$OUT/cli.runs"
    say "CLI read against python keyring's CLI: $small rounds"
    spawn-timer "$small" 1 \
        keygate-get keygate get -s bench -a user --- \
        keyring-cli "$VENV/bin/keyring" get bench-py user >"$OUT/cli-python.runs"

    say "cached gated read (user presence in its reuse window) against a plain read"
    # The warm-up round authenticates once (askpass, PAM, Argon2id); the reuse scope is the
    # parent process (no terminal), which is this spawn-timer for every round.
    spawn-timer "$ROUNDS" 2 \
        gated-cached keygate get -s bench -a gated --- \
        plain keygate get -s bench -a user >"$OUT/gated.runs"

    say "authenticated read: keygate lock, then a gated read through PAM and Argon2id"
    spawn-timer "$small" 1 \
        '!lock' keygate lock --- \
        gated-auth keygate get -s bench -a gated --- \
        plain keygate get -s bench -a user >"$OUT/auth.runs"
fi
read -r ops mem < <("$VENV/bin/python" -c '
import json, re, sys
kdf = json.load(open(sys.argv[1])).get("passwordKDF") or ""
m = re.search(r"(\d+) passes, (\d+) MiB", kdf)
print(m.group(1), int(m.group(2)) * 1048576) if m else print(0, 0)' "$OUT/status.json")
((ops > 0)) || { say "keygate status --json shows no Argon2id cost"; exit 1; }
printf '%s %s\n' "$ops" "$mem" >"$OUT/kdf-cost"
if step cli; then argon2id "$ops" "$mem" 7 >"$OUT/kdf.ms"; fi

if command -v keygate-1x >/dev/null 2>&1; then
    # Each version with its own keychain (XDG_DATA_HOME) and its own items (service bench1 for
    # 1.x); both run through env, so that neither side pays a spawn the other does not. Each
    # read follows its own `lock`, which drops the master key both versions cache under one name.
    say "first gated read against Keygate 1.x: lock, then a gated read, each with its own keychain"
    v1=(env XDG_DATA_HOME="$HOME/v1-data" keygate-1x)
    v2=(env XDG_DATA_HOME="$HOME/.local/share" keygate)
    mkdir -p "$HOME/v1-data"
    "${v1[@]}" init >/dev/null 2>&1
    "${v1[@]}" status --json >"$OUT/status-1x.json"
    if ! printf %s "$(cat "$HOME/secret")" | "${v1[@]}" add -s bench1 -a gated --access user-presence 2>"$OUT/v1-add.err"; then
        # 1.x refuses a vendor policy with keys it never knew (default-access and minimum-access)
        # that this host's `make install` put in place: its figures cannot be taken here.
        say "first gated read against Keygate 1.x skipped: 1.x cannot add here: $(head -c 300 "$OUT/v1-add.err")"
        skip_v1=1
        # 1.x's init cached its master key under the name both versions use: drop it, and open this
        # version's keychain again for the steps that follow (the library read among them).
        "${v1[@]}" lock --all >/dev/null 2>&1
        keygate unlock >/dev/null 2>&1
    fi
fi
if command -v keygate-1x >/dev/null 2>&1 && [[ -z ${skip_v1:-} ]]; then
    "${v1[@]}" get -s bench1 -a gated | cmp -s - "$HOME/secret" || { say "keygate 1.x get returned other bytes"; exit 1; }
    read -r ops1 mem1 < <("$VENV/bin/python" -c '
import json, re, sys
kdf = json.load(open(sys.argv[1])).get("passwordKDF") or ""
m = re.search(r"(\d+) passes, (\d+) MiB", kdf)
print(m.group(1), int(m.group(2)) * 1048576) if m else print(0, 0)' "$OUT/status-1x.json")
    ((ops1 > 0)) || { say "keygate 1.x status --json shows no Argon2id cost"; exit 1; }
    # Each version's KDF (its own calibrated cost) is timed as a process in the same rounds, so the
    # machine's load falls on the reads and on the KDFs that are subtracted from them alike.
    spawn-timer "$small" 1 \
        '!lock' "${v2[@]}" lock --- \
        gated-auth "${v2[@]}" get -s bench -a gated --- \
        kdf argon2id "$ops" "$mem" 1 --- \
        '!lock-1x' "${v1[@]}" lock --- \
        gated-auth-1x "${v1[@]}" get -s bench1 -a gated --- \
        kdf-1x argon2id "$ops1" "$mem1" 1 >"$OUT/auth-1x.runs"
    # 1.x's last read left its master key under the name both versions use: drop it, and open
    # this version's keychain again for the steps that follow.
    "${v1[@]}" lock --all >/dev/null 2>&1
    keygate unlock >/dev/null 2>&1
fi

if step library; then
    say "library read in one process: Keychain.data(for:) against libsecret's lookup and python keyring"
    calls=300 batches=$((QUICK ? 5 : 15))
    : >"$OUT/library.runs"
    for ((i = 0; i < batches; i++)); do
        printf 'keygate-library %s\n' "$(library-read read bench user "$calls")" >>"$OUT/library.runs"
        printf 'c-floor %s\n' "$(lookup-loop "$calls" keygate:class genp service bench account user)" >>"$OUT/library.runs"
        # With BASELINE, the baseline's library in the same batches: before and after, paired.
        if command -v library-read-baseline >/dev/null 2>&1; then
            printf 'keygate-library-baseline %s\n' "$(library-read-baseline read bench user "$calls")" >>"$OUT/library.runs"
        fi
        printf 'python-keyring %s\n' "$("$VENV/bin/python" "$BENCH_LIB/keyring-loop.py" "$calls" bench-py user)" >>"$OUT/library.runs"
    done
fi

# measure_scale N: get, list, list --json and secret-tool search --all over N items of
# service "scale", then delete --all (recorded, even when it fails). Below 10,000 (whose
# seeded items gnome-keyring refuses property reads of), gnome-keyring's own time for the
# property reads of a list is timed beside them: property-floor reads one property of every
# item (what `list` reads: its label and dates are attributes) and two (what it read before
# its label was an attribute). gnome-keyring answers one
# request at a time, and at 10,000 items secret-tool gives up on its search while the daemon
# still works through the GetSecrets it queued: the untimed "settle" call waits behind that
# backlog, so the next round's `get` times Keygate, not secret-tool's leftovers (the first
# run without it measured get at 2.6 s wall and 20 ms CPU).
measure_scale() {
    local n=$1 rounds status scale_baseline=() floor=()
    ((BASELINE)) && scale_baseline=(list-baseline keygate-baseline list -s scale ---)
    ((n < 10000)) && floor=(floor-1 property-floor scale 1 --- floor-2 property-floor scale 2 ---)
    rounds=$((n >= 10000 ? 3 : n >= 1000 ? 5 : 10))
    say "  $n items: get, list, secret-tool search --all ($rounds rounds), then delete --all"
    # A run that fails (a deadline at this size) is recorded with its status, not fatal.
    SPAWN_TIMER_KEEP_GOING=1 spawn-timer "$rounds" 1 \
        get keygate get -s scale -a item-5 --- \
        list keygate list -s scale --- \
        list-json keygate list -s scale --json --- \
        "${scale_baseline[@]}" \
        "${floor[@]}" \
        secret-tool-search secret-tool search --all service scale --- \
        '!settle' gdbus call --session --timeout 300 --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
            --method org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Service Collections \
        | sed "s/^/$n /" >>"$OUT/scale.runs"
    status=0
    # Capped at 120 s (status 124): at 10,000 items it could otherwise run for many minutes.
    /usr/bin/time -v -o "$OUT/delete-$n.time" timeout 120 keygate delete -s scale --all --yes 2>>"$OUT/stderr.log" || status=$?
    printf 'delete-all %s %s %s %s\n' "$n" \
        "$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s * 1000 }' "$OUT/delete-$n.time")" \
        "$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$OUT/delete-$n.time")" "$status" >>"$OUT/scale.runs"
    return "$status"
}
count_scale() { secret-tool search --all service scale 2>&1 | grep -c '^attribute.account = item-' || true; }

if ((SCALE)); then
say "scale: 10 and 1,000 items through Keychain.set, then 10,000 seeded into the keyring file"
sizes=(10 1000)
((QUICK)) && sizes=(10 300)
for n in "${sizes[@]}"; do
    t0=$(now); library-read populate scale "$n"; t1=$(now)
    printf 'populate %s %s\n' "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >>"$OUT/scale.runs"
    listed=$(count_scale)
    [[ "$listed" == "$n" ]] || { say "the store holds $listed scale items, not $n"; exit 1; }
    if ! measure_scale "$n"; then
        left=$(count_scale)
        printf 'delete-left %s %s\n' "$n" "$left" >>"$OUT/scale.runs"
        # What delete --all left goes with libsecret's own clear (one D-Bus delete each).
        t0=$(now); secret-tool clear service scale 2>>"$OUT/stderr.log" || true; t1=$(now)
        printf 'secret-tool-clear %s %s %s\n' "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) * 1000 }')" "$left" >>"$OUT/scale.runs"
    fi
done
if ((QUICK == 0)); then
    # 10,000 writes through D-Bus do not fit the time box (gnome-keyring rewrites its whole
    # file on every write): 10 real items, grown to 10,000 in the keyring file, which the
    # daemon reloads when it sees the file change (the first read below waits for that).
    library-read populate scale 10
    # A second after gnome-keyring's last save, so that the seeded file differs from it in time
    # as well as in content (a precaution: the wait below is what proves the reload).
    sleep 1.1
    /usr/bin/python3 "$BENCH_LIB/seed-keyring.py" "$HOME/.local/share/keyrings/login.keyring" 10000 >&2
    sleep 1
    # Reloading 10,000 items can take gnome-keyring longer than one call's 5 s deadline: its
    # SearchItems is asked until it finds all 10,000, for up to 5 minutes, then a real read.
    # (Not `secret-tool search`: it reads the seeded items' properties, which gnome-keyring 42
    # refuses after such a reload: "No such secret item". Nor a read of a real item alone: that
    # passed before the reload, and earlier runs' "10,000" figures measured 10 items.)
    scale_count() {
        gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
            --method org.freedesktop.Secret.Service.SearchItems "{'service': 'scale'}" 2>>"$OUT/stderr.log" \
            | grep -o "/org/freedesktop/secrets/collection/[^']*" | wc -l
    }
    t0=$(now)
    until (($(scale_count) >= 10000)) && keygate get -s scale -a item-5 >/dev/null 2>>"$OUT/stderr.log"; do
        if awk -v a="$t0" -v b="$(now)" 'BEGIN { exit !(b - a > 300) }'; then
            say "gnome-keyring did not answer within 5 minutes of the seeded file's change"; exit 1
        fi
        sleep 1
    done
    t1=$(now)
    printf 'reload %s %s\n' 10000 "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >>"$OUT/scale.runs"
    measure_scale 10000 || say "  delete --all of 10,000 items failed (recorded)"
fi
# Concurrency runs last: 8 library processes at once have made gnome-keyring 42.1 abort (a GLib
# trap in gnome-keyring-daemon, seen in the kernel log) in two runs; D-Bus activation then starts a
# locked one, and every later step would fail.
say "concurrency: 1 process against 8 at once, CLI and library"
cli_reads=$((QUICK ? 10 : 40)) lib_reads=$((QUICK ? 100 : 400))
cli_loop() { for ((j = 0; j < cli_reads; j++)); do keygate get -s bench -a user >/dev/null; done; }
: >"$OUT/concurrency.runs"
for ((i = 0; i < 3; i++)); do
    for procs in 1 8; do
        t0=$(now)
        for ((p = 0; p < procs; p++)); do cli_loop & done
        wait
        t1=$(now)
        printf 'cli-%s %s %s\n' "$procs" "$((procs * cli_reads))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >>"$OUT/concurrency.runs"
        t0=$(now)
        for ((p = 0; p < procs; p++)); do library-read read bench user "$lib_reads" >/dev/null & done
        wait
        t1=$(now)
        printf 'library-%s %s %s\n' "$procs" "$((procs * (lib_reads + 1)))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >>"$OUT/concurrency.runs"
    done
done

else
    say "scale and concurrency left out (BENCH_SCALE=0)"
fi

say "done"
