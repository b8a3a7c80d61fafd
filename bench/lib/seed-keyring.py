"""bench/lib/seed-keyring.py: grows the "scale" items of an unencrypted gnome-keyring
login.keyring to N items (gnome-keyring notices the file changed and reloads it), so
that the 10,000-item figures need no 10,000 Secret Service writes (gnome-keyring rewrites the whole file on
every write: filling 10,000 items through D-Bus takes far longer than the suite's time
box). The new items copy the attributes of the real ones with accounts item-10 ... (and
labels scale/item-10 ...);
their blobs are copies, which only `get` would notice, and the bench reads only the
genuine item-5. gnome-keyring 42 finds the seeded items by SearchItems and GetSecrets but
answers a property read of one with "Object does not exist" (UnknownMethod), as for a deleted
item: `list` at 10,000 shows the 10 real items, after gnome-keyring's work over all 10,000
paths, and `secret-tool search --all` fails. usage: seed-keyring.py LOGIN_KEYRING N"""
import os
import re
import sys

path, total = sys.argv[1], int(sys.argv[2])
text = open(path).read()
sections = re.split(r"\n(?=\[)", text)
items = {}
for s in sections:
    m = re.match(r"\[(\d+)(?::attribute\d+)?\]", s)
    if m:
        items.setdefault(int(m.group(1)), []).append(s)
scale = [i for i, parts in items.items() if any("name=service\ntype=string\nvalue=scale\n" in p + "\n" for p in parts)]
if not scale:
    sys.exit("seed-keyring: no scale items in " + path)
template = items[scale[0]]
have, next_id = len(scale), max(items) + 1
out = [text.rstrip("\n")]
for k in range(have, total):
    new = []
    for part in template:
        part = re.sub(r"^\[\d+", f"[{next_id}", part)
        part = re.sub(r"(?m)^display-name=.*$", f"display-name=scale/item-{k}", part)
        part = re.sub(r"(?m)^(name=account\ntype=string\nvalue=)item-\d+$", rf"\g<1>item-{k}", part)
        part = re.sub(r"(?m)^(name=keygate:label\ntype=string\nvalue=).*$", rf"\g<1>scale/item-{k}", part)
        new.append(part.rstrip("\n"))
    out.append("\n\n".join(new))
    next_id += 1
st = os.stat(path)
tmp = path + ".seed"
with open(tmp, "w") as f:
    f.write("\n\n".join(out) + "\n")
os.chown(tmp, st.st_uid, st.st_gid)
os.chmod(tmp, 0o600)
os.replace(tmp, path)
print(f"seeded {total - have} items (had {have})")
