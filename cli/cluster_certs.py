"""``blokus cluster-certs DIR [--days N]``: the certificates of a cluster (``net.cluster.make_certificates``): its
own certificate authority and a key and certificate for the scheduler, the workers and the client, for the mutual
TLS of ``--cluster tls://HOST:PORT --cluster-certs DIR`` (the README's recipe starts scheduler and workers with
them). The CA's key is not kept: only these certificates belong to the cluster."""

from __future__ import annotations

import argparse
from pathlib import Path

from blokus.cli.options import Parser, fail
from blokus.net.cluster import CA_FILE, CERT_DAYS, CERTS_ENV, ClusterError, cert_files, make_certificates

WHERE = {
    "scheduler": "the scheduler's machine (dask scheduler --tls-cert/--tls-key)",
    "worker": "every worker machine (dask worker --tls-cert/--tls-key)",
    "client": f"where blokus arena/tournament runs (--cluster-certs DIR or {CERTS_ENV}=DIR)",
}


def days(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of days {text!r}") from None
    if not 0 < value <= 3650:
        raise argparse.ArgumentTypeError(f"--days {value}: 1 to 3650")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        "blokus cluster-certs",
        "Make the certificates of a cluster for --cluster tls://HOST:PORT: a CA of its own (its key is not "
        "kept) and a key and certificate each for the scheduler, the workers and the client.",
    )
    parser.add_argument("folder", metavar="DIR", help="a new folder (or one without certificates) for the files")
    parser.add_argument(
        "--days", type=days, default=CERT_DAYS, help=f"how long the certificates are valid (default {CERT_DAYS})"
    )
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    try:
        make_certificates(folder, args.days)
    except ClusterError as exc:
        return fail(parser.prog, str(exc))
    width = len(", ".join(cert_files("scheduler")))
    print(f"{folder}: the certificates of a new cluster, valid {args.days} days; copy to")
    print(f"  {CA_FILE:<{width}}  every machine")
    for role, where in WHERE.items():
        print(f"  {', '.join(cert_files(role)):<{width}}  {where}")
    print("a key (-key.pem) lets its holder into the cluster: copy each only to its machines, readable by its user")
    return 0
