#!/usr/bin/env bash
# bench/secret-service/callgrind-steps.sh: the user's half of bench/secret-service/callgrind (see
# there). As the throwaway user, in a session keyring of its own: a private bus, the keychain
# (the debug keygate's test hooks), then each daemon in $DAEMONS in turn under callgrind with one
# item (a 32-byte secret): 200 lookups to warm up, then the counters zeroed and dumped around one
# lookup-loop process of 1 lookup and one of 301; the difference over 300 is a lookup's cost
# (the DH OpenSession each lookup-loop process makes cancels out). Appends to $OUT/summary.
set -euo pipefail
tools=$(dirname "$(readlink -f "$0")")
run=$(mktemp -d /tmp/kg-cg.XXXXXX); pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
mkdir -p "$run/bus"
cat >"$run/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path=$run/bus/s</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$run/bus.conf" --nofork --nopidfile </dev/null >"$run/dbus.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do [[ -S "$run/bus/s" ]] && break; sleep 0.05; done
export DBUS_SESSION_BUS_ADDRESS=unix:path=$run/bus/s
keygate init </dev/null >/dev/null 2>"$run/init.err" || { cat "$run/init.err" >&2; exit 1; }
secret=$(printf '%032d' 7)
for d in $DAEMONS; do
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$d.%p" "$tools/$d" </dev/null >"$run/$d.log" 2>&1 & vp=$!; pids+=($vp)
  for _ in $(seq 400); do dbus-send --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q true && break; sleep 0.1; done
  printf %s "$secret" | secret-tool store --label=bench app bench
  lookup-loop 200 app bench >/dev/null
  callgrind_control -z $vp >/dev/null 2>&1
  lookup-loop 1 app bench >/dev/null
  callgrind_control -d a1 $vp >/dev/null
  callgrind_control -z $vp >/dev/null 2>&1
  lookup-loop 301 app bench >/dev/null
  callgrind_control -d a301 $vp >/dev/null
  kill $vp; wait $vp 2>/dev/null || true
  a=$(grep -h '^summary:' "$OUT"/cg.$d.$vp.1 | awk '{print $2}')
  b=$(grep -h '^summary:' "$OUT"/cg.$d.$vp.2 | awk '{print $2}')
  echo "$d per-lookup $(( (b - a) / 300 )) (1: $a, 301: $b)" | tee -a "$OUT/summary"
  secret-tool clear app bench || true
done
