#!/bin/sh
# with-log-socket: runs a command in a private mount namespace whose /dev/log is
# the datagram socket FOLDER/log, so a test reads what pam_syslog wrote without a
# syslog daemon and without touching the host's /dev. A tmpfs hides /dev inside
# the namespace only; the few devices a PAM stack needs are bound back in.
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
exec "$@"
