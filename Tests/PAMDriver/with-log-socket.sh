#!/bin/sh
# with-log-socket: runs a command in a private mount namespace whose /dev/log is
# the datagram socket FOLDER/log, so a test reads what pam_syslog wrote without a
# syslog daemon and without touching the host's /dev. A tmpfs hides /dev inside
# the namespace only; the few devices a PAM stack needs are bound back in.
# With KEYGATE_TEST_ADMIN_POLICY=DIR, DIR is also bound over /etc/keygate/policies.d
# (created empty on the host if missing), so the module reads a test's system policy
# without changing the host's. With KEYGATE_TEST_PAM_SSHD=FILE, FILE is bound over
# /etc/pam.d/sshd, for a test's own sshd; with KEYGATE_TEST_PAM_SU=FILE, over /etc/pam.d/su,
# for a test's su. With KEYGATE_TEST_AUDIT_FOLDER=DIR, DIR is bound over /var/log/keygate
# (created on the host if missing), so a test reads and plants root's audit record alone.
#   usage: unshare -m --propagation private with-log-socket.sh FOLDER COMMAND...
set -eu
folder=$1; shift
mkdir -p "$folder/dev"
mount --bind /dev "$folder/dev"
mount -t tmpfs -o mode=0755,size=64k keygate-test-dev /dev
for name in null zero full random urandom tty; do
  touch "/dev/$name"
  mount --bind "$folder/dev/$name" "/dev/$name"
done
ln -s "$folder/log" /dev/log
if [ -n "${KEYGATE_TEST_ADMIN_POLICY:-}" ]; then
  mkdir -p /etc/keygate/policies.d
  mount --bind "$KEYGATE_TEST_ADMIN_POLICY" /etc/keygate/policies.d
fi
if [ -n "${KEYGATE_TEST_PAM_SSHD:-}" ]; then
  mount --bind "$KEYGATE_TEST_PAM_SSHD" /etc/pam.d/sshd
fi
if [ -n "${KEYGATE_TEST_PAM_SU:-}" ]; then
  mount --bind "$KEYGATE_TEST_PAM_SU" /etc/pam.d/su
fi
if [ -n "${KEYGATE_TEST_AUDIT_FOLDER:-}" ]; then
  mkdir -p -m 0700 /var/log/keygate
  mount --bind "$KEYGATE_TEST_AUDIT_FOLDER" /var/log/keygate
fi
exec "$@"
