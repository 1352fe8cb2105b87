"""Drive the real ovirt-imageio client against a Hangar transfer URL.

usage: imageio_client.py upload FILE URL WORKERS
       imageio_client.py download URL FILE WORKERS
       imageio_client.py checksum FILE
Prints one JSON line with what the test needs.
"""
import json
import sys
import time

from ovirt_imageio import client


def main(cmd, *args):
    start = time.monotonic()
    if cmd == "upload":
        path, url, workers = args
        client.upload(path, url, None, secure=False, max_workers=int(workers))
        out = {}
    elif cmd == "download":
        url, path, workers = args
        client.download(url, path, None, fmt="raw", secure=False, max_workers=int(workers))
        out = {}
    elif cmd == "checksum":
        out = client.checksum(args[0])
    else:
        raise SystemExit("unknown command %r" % cmd)
    out["seconds"] = time.monotonic() - start
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
