"""keyrings.keygate: Python keyring's backend for Keygate.

Each call runs the keygate CLI (found on PATH) and maps its exit status onto
keyring's errors; Keygate does the storage, the sealing and the access control.
Passwords go to keygate on its standard input and come back on its standard
output, never in argv or the environment. Keygate's status codes follow macOS
`security`: 44 not found, 36 interaction not allowed (KeyringLocked here), 128
canceled, 51 authentication failed.
"""

import json
import shutil
import subprocess

from keyring.backend import KeyringBackend
from keyring.credentials import SimpleCredential
from keyring.errors import KeyringError, KeyringLocked, PasswordDeleteError, PasswordSetError

try:
    from jaraco.classes import properties
except ImportError:  # keyring versions that vendor it
    from keyring._compat import properties

NOT_FOUND = 44
INTERACTION_NOT_ALLOWED = 36
PROGRAM = "keygate"


def _keygate():
    path = shutil.which(PROGRAM)
    if path is None:
        raise KeyringError("keygate is not on PATH: install Keygate, or choose another keyring backend")
    return path


def _run(args, secret=None):
    """Runs keygate with args; secret (bytes) goes to its standard input."""
    return subprocess.run(
        [_keygate()] + args,
        input=secret if secret is not None else b"",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )


def _message(result):
    return result.stderr.decode("utf-8", "replace").strip() or "keygate exited with status %d" % result.returncode


def _check(result, error_type):
    if result.returncode == INTERACTION_NOT_ALLOWED:
        raise KeyringLocked(_message(result))
    if result.returncode != 0:
        raise error_type(_message(result))


class KeygateKeyring(KeyringBackend):
    """Passwords in Keygate: generic passwords (service, account).

    keyring runs in scripts and services (pip, twine, poetry, cron jobs), where
    nobody may be there to type a password, so set_password stores with no
    access control: the item reads while the keychain is unlocked, as
    SecretStorage's do. Set `access` (a keygate --access list, such as
    "user-presence") to gate new passwords; a system policy's minimum-access
    raises them anyway.
    """

    access = "none"

    @properties.classproperty
    def priority(cls):
        # Above SecretStorage (5) and keyring's chainer (10): with keygate on PATH,
        # keyring uses Keygate alone.
        if shutil.which(PROGRAM) is None:
            raise RuntimeError("keygate is not on PATH")
        return 15

    def get_password(self, service, username):
        result = _run(["get", "-s", service, "-a", username])
        if result.returncode == NOT_FOUND:
            return None
        _check(result, KeyringError)
        return result.stdout.decode("utf-8")

    def set_password(self, service, username, password):
        result = _run(["add", "-U", "-s", service, "-a", username, "--access", self.access],
                      secret=password.encode("utf-8"))
        _check(result, PasswordSetError)

    def delete_password(self, service, username):
        result = _run(["delete", "-s", service, "-a", username])
        if result.returncode == NOT_FOUND:
            raise PasswordDeleteError("no password for %s/%s in Keygate" % (service, username))
        _check(result, PasswordDeleteError)

    def get_credential(self, service, username):
        if username is None:
            result = _run(["list", "-s", service, "--json"])
            _check(result, KeyringError)
            accounts = [item.get("account") for item in json.loads(result.stdout.decode("utf-8") or "[]")]
            accounts = [a for a in accounts if a is not None]
            if not accounts:
                return None
            username = accounts[0]
        password = self.get_password(service, username)
        return None if password is None else SimpleCredential(username, password)
