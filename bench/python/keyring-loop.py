# keyring-loop: python keyring (PyPI) in one process, its SecretService backend, the
# same loop as lookup-loop and library-read. usage: keyring-loop.py N SERVICE USERNAME
# prints "first_us mean_us median_us".
import sys
import time

import keyring
from keyring.backends import SecretService

n, service, username = int(sys.argv[1]), sys.argv[2], sys.argv[3]
keyring.set_keyring(SecretService.Keyring())
t0 = time.perf_counter()
if not keyring.get_password(service, username):
    sys.exit("keyring-loop: no such item")
first = (time.perf_counter() - t0) * 1e6
times = []
for _ in range(n):
    s = time.perf_counter()
    if not keyring.get_password(service, username):
        sys.exit("keyring-loop: the item vanished")
    times.append((time.perf_counter() - s) * 1e6)
times.sort()
print(f"{first:.1f} {sum(times) / n:.1f} {times[n // 2]:.1f}")
