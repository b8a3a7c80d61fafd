#!/bin/sh
# Makes the keychain of ReleaseKeychainUpgradeTests with the release at 3bd8d10 (main at that
# commit): its debug `keygate` and `keygate-gatekeeper` (test hooks: pam_matrix,
# a temporary gate folder, policy folders), run as root, the embedded store, and that
# release's shipped vendor policy (`access = user-presence` in [default]) plus an admin
# section giving CI tokens `access = none`, as policies/examples/ci-tokens.policy does.
# Run once; the files it wrote are frozen here and never made again:
#   OLD=/path/to/old/build/debug sh make.sh OUTPUT_FOLDER
set -eu
old=${OLD:?the folder of the old release debug keygate and keygate-gatekeeper}
out=${1:?output folder}
work=$(mktemp -d)
password='release keychain password'
mkdir -p "$work/pam" "$work/policy/vendor" "$work/policy/admin" "$work/policy/user" "$work/home" "$work/data" "$work/gate"
for service in keygate keygate-passcode; do
    printf 'root:%s:%s\n' "$password" "$service" > "$work/pam/$service.passdb"
    printf 'auth required /usr/lib/x86_64-linux-gnu/pam_wrapper/pam_matrix.so passdb=%s\naccount required /usr/lib/x86_64-linux-gnu/pam_wrapper/pam_matrix.so passdb=%s\n' \
        "$work/pam/$service.passdb" "$work/pam/$service.passdb" > "$work/pam/$service"
done
cp "$(dirname "$0")/vendor-00-default.policy" "$work/policy/vendor/00-default.policy"
cp "$(dirname "$0")/admin-10-ci.policy" "$work/policy/admin/10-ci.policy"
printf '#!/bin/sh\nprintf "%%s\\n" "%s"\n' "$password" > "$work/askpass"
chmod 700 "$work/askpass"
chmod 755 "$work" "$work/policy" "$work/policy/"*
run() {
    env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_DATA_HOME="$work/data" KEYGATE_STORE=embedded \
        KEYGATE_TEST_GATE_DIR="$work/gate" KEYGATE_TEST_GATEKEEPER="$old/keygate-gatekeeper" \
        KEYGATE_TEST_PAM_CONFDIR="$work/pam" KEYGATE_TEST_POLICY_ROOT="$work/policy" KEYGATE_TEST_KDF=fast \
        KEYGATE_ASKPASS="$work/askpass" "$old/keygate" "$@"
}
run init > "$work/recovery-key"
printf %s 'vpn secret' | run add -s vpn -a alice                          # the vendor default: user-presence
printf %s 'bank secret' | run add -s bank -a alice --access device-passcode
printf %s 'ci secret' | run add -s ci-deploy -a runner                    # the admin section: none
run list > "$work/list.txt"
mkdir -p "$out/data" "$out/gate"
cp -a "$work/data/keygate" "$out/data/"
rm -f "$out/data/keygate/items.sqlite-shm" "$out/data/keygate/items.sqlite-wal" "$out/data/keygate/.keys.lock"
cp -a "$work/gate/state" "$out/gate/"
cp "$work/list.txt" "$out/list-by-the-release.txt"
rm -rf "$work"
