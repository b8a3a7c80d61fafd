#!/usr/bin/env bash
# bench/secret-service/steps.sh: the user's half of bench/secret-service/run (see there). Runs
# as the throwaway user in a session keyring of its own; writes raw figures into $OUT:
# cli.runs (spawn-timer lines), inprocess.runs (LABEL first mean median, in us), rss (LABEL
# PHASE KB), activation.runs (LABEL MS).
set -euo pipefail
tools=$(dirname "$(readlink -f "$0")")
say() { printf '%s\n' "$*" >&2; }
run=$(mktemp -d /tmp/kg-ss-bench-user.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$run"' EXIT

bus() { # bus DIR [SERVICEDIR]: a private bus; its address in $address
    local dir=$1 servicedir=${2:-}
    mkdir -p "$dir"
    cat >"$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path=$dir/bus</listen><auth>EXTERNAL</auth>
$([[ -n "$servicedir" ]] && echo "<servicedir>$servicedir</servicedir>")
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
    dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile </dev/null >"$dir/dbus.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [[ -S "$dir/bus" ]] && break; sleep 0.05; done
    address="unix:path=$dir/bus"
}
owner_pid() { dbus-send --bus="$1" --print-reply=literal --dest=org.freedesktop.DBus / \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '{print $NF}'; }
wait_owner() { for _ in $(seq 200); do [[ -n "$(owner_pid "$1")" ]] && return 0; sleep 0.05; done; return 1; }

# A: Keygate's daemon (release), the keychain made with the debug keygate's test hooks.
bus "$run/a"; A=$address
keygate init </dev/null >/dev/null 2>"$run/init.err" || { cat "$run/init.err" >&2; exit 1; }
DBUS_SESSION_BUS_ADDRESS=$A keygate-secret-service </dev/null >"$run/keygate.log" 2>&1 &
pids+=($!); wait_owner "$A" || { say "keygate-secret-service did not start: $(cat "$run/keygate.log")"; exit 1; }
kpid=$(owner_pid "$A")
# C (when run was given BASELINE_DAEMON): another build of the daemon, on a bus of its own over
# the same keychain file, timed in the same rounds as A and B.
sides="keygate gnome"
if [[ -x "$tools/keygate-secret-service-baseline" ]]; then
    bus "$run/c"; C=$address
    DBUS_SESSION_BUS_ADDRESS=$C "$tools/keygate-secret-service-baseline" </dev/null >"$run/baseline.log" 2>&1 &
    pids+=($!); wait_owner "$C" || { say "the baseline daemon did not start: $(cat "$run/baseline.log")"; exit 1; }
    sides="keygate baseline gnome"
fi
address_of() { case $1 in keygate) echo "$A";; baseline) echo "$C";; gnome) echo "$B";; esac; }
# B: gnome-keyring, as scripts/secret-session (this script runs inside it) started and unlocked
# it: an unencrypted login keyring (empty password) in the throwaway home.
B=$DBUS_SESSION_BUS_ADDRESS
gpid=$(owner_pid "$B")
[[ -n "$gpid" ]] || { say "no gnome-keyring on the session bus"; exit 1; }

secret=$(printf '%032d' 7)
printf %s "$secret" | DBUS_SESSION_BUS_ADDRESS=$A secret-tool store --label=bench app bench
# gnome-keyring makes its login keyring a moment after it answers: retry for a few seconds.
for _ in $(seq 50); do
    printf %s "$secret" | DBUS_SESSION_BUS_ADDRESS=$B secret-tool store --label=bench app bench 2>/dev/null && break
    sleep 0.1
done
[[ "$(DBUS_SESSION_BUS_ADDRESS=$A secret-tool lookup app bench)" == "$secret" ]] || { say "Keygate's lookup failed"; exit 1; }
[[ "$(DBUS_SESSION_BUS_ADDRESS=$B secret-tool lookup app bench)" == "$secret" ]] || { say "gnome-keyring's lookup failed"; exit 1; }
commands=()
for side in $sides; do
    [[ "$(DBUS_SESSION_BUS_ADDRESS=$(address_of "$side") secret-tool lookup app bench)" == "$secret" ]] || { say "$side: lookup failed"; exit 1; }
    commands+=(${commands:+---} "$side" env DBUS_SESSION_BUS_ADDRESS="$(address_of "$side")" secret-tool lookup app bench)
done

say "secret-tool lookup: $ROUNDS rounds each, interleaved ($sides)"
spawn-timer "$ROUNDS" 10 "${commands[@]}" >"$OUT/cli.runs"

# The order turns each round: whichever side goes second in a round was measured 5-9 % faster,
# more than two builds of the daemon differ, so each side goes first in half of the rounds.
say "libsecret in-process lookup: 6 rounds of 300, the order reversed every other round ($sides)"
reversed=$(printf '%s\n' $sides | tac | tr '\n' ' ')
for round in 1 2 3 4 5 6; do
    order=$sides; ((round % 2 == 0)) && order=$reversed
    for side in $order; do
        echo "$side $(DBUS_SESSION_BUS_ADDRESS=$(address_of "$side") lookup-loop 300 app bench)" >>"$OUT/inprocess.runs"
    done
done

say "activation to owning the name: 15 rounds each"
mkdir -p "$run/kg-services" "$run/gk-services"
printf '[D-BUS Service]\nName=org.freedesktop.secrets\nExec=%s/keygate-secret-service\n' "$tools" >"$run/kg-services/org.freedesktop.secrets.service"
# gnome-keyring's own activation line, with a control folder of its own: --start would otherwise
# join the gnome-keyring secret-session already runs (its control socket) instead of starting.
mkdir -p "$run/gk-control"
sed "s|^Exec=.*|& --control-directory=$run/gk-control|" /usr/share/dbus-1/services/org.freedesktop.secrets.service \
    >"$run/gk-services/org.freedesktop.secrets.service"
bus "$run/ka" "$run/kg-services"; K=$address; bus "$run/ga" "$run/gk-services"; G=$address
for _ in $(seq 15); do
    for side in keygate gnome; do
        address=$K; [[ $side == gnome ]] && address=$G
        t0=$(date +%s%N)
        dbus-send --bus="$address" --print-reply --reply-timeout=20000 --dest=org.freedesktop.DBus / \
            org.freedesktop.DBus.StartServiceByName string:org.freedesktop.secrets uint32:0 >/dev/null \
            || { say "  $side: activation failed"; continue; }
        t1=$(date +%s%N)
        echo "$side $(( (t1 - t0) / 1000 ))" | awk '{ printf "%s %.3f\n", $1, $2 / 1000 }' >>"$OUT/activation.runs"
        p=$(owner_pid "$address"); kill "$p"
        for _ in $(seq 100); do [[ -z "$(owner_pid "$address")" ]] && break; sleep 0.02; done
    done
done
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
echo "keygate idle $(rss "$kpid")" >>"$OUT/rss"
echo "gnome idle $(rss "$gpid")" >>"$OUT/rss"

say "$ITEMS items in each"
/usr/bin/python3 - "$A" "$ITEMS" <<'PY'
import sys
from jeepney import new_method_call, DBusAddress, MessageType
from jeepney.io.blocking import open_dbus_connection
address, total = sys.argv[1], int(sys.argv[2])
c = open_dbus_connection(bus=address)
svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")
session = c.send_and_get_reply(new_method_call(svc, "OpenSession", "sv", ("plain", ("s", "")))).body[1]
col = DBusAddress("/org/freedesktop/secrets/aliases/default", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Collection")
for i in range(total):
    props = {"org.freedesktop.Secret.Item.Label": ("s", "scale/item-%d" % i),
             "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"service": "scale", "account": "item-%d" % i})}
    r = c.send_and_get_reply(new_method_call(col, "CreateItem", "a{sv}(oayays)b", (props, (session, b"", b"%032d" % i, "text/plain"), False)))
    if r.header.message_type == MessageType.error: sys.exit("CreateItem: %s" % (r.body,))
PY
for i in $(seq 0 9); do
    printf '%032d' "$i" | DBUS_SESSION_BUS_ADDRESS=$B secret-tool store --label="scale/item-$i" service scale account "item-$i"
done
sleep 1.2
/usr/bin/python3 "$tools/seed-keyring.py" "$HOME/.local/share/keyrings/login.keyring" "$ITEMS" >&2
count() { gdbus call --address "$1" --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
    --method org.freedesktop.Secret.Service.SearchItems "{'service': 'scale'}" 2>/dev/null | grep -o "/org/freedesktop/secrets/collection/[a-z_]*/[a-z0-9_]*" | wc -l; }
for _ in $(seq 300); do (( $(count "$B") >= ITEMS )) && break; sleep 1; done
say "  Keygate holds $(count "$A") scale items, gnome-keyring $(count "$B")"
echo "keygate items $(rss "$kpid")" >>"$OUT/rss"
echo "gnome items $(rss "$gpid")" >>"$OUT/rss"

say "done"
