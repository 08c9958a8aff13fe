"""Control-plane host addresses for a lab that looks like kubeadm to a kubeconfig-only client.

On a kubeadm cluster every control-plane host has an address of its own, the ``kubernetes``
Service's EndpointSlices list each apiserver at it, and etcd, the scheduler and the
controller-manager serve their metrics there, where the apiserver's pod proxy can reach
them (it refuses loopback addresses). The lab gives each of its control-plane hosts a
private address, ``10.200.N.i/32``, on the loopback device (traffic to it never leaves the
machine) and removes them when it stops. Adding an address needs root (``CAP_NET_ADMIN``);
without it the lab says so at once.
"""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess

from ktop.lab.util import LabError

PREFIX = "10.200"
"""The /16 the lab's host addresses come from (one /24 per lab: ``10.200.N.0``)."""
DEVICE = "lo"


def _ip(*args: str) -> str:
    ip = shutil.which("ip")
    if ip is None:
        raise LabError("kubeadm-like hosts need the `ip` command (Debian package iproute2)")
    done = subprocess.run([ip, *args], capture_output=True, text=True, check=False, timeout=10)
    if done.returncode != 0:
        raise LabError(
            f"`ip {' '.join(args)}` failed: {done.stderr.strip() or done.returncode} "
            "(kubeadm-like hosts need root: CAP_NET_ADMIN)"
        )
    return done.stdout


def used_subnets() -> set[int]:
    """The N of every ``10.200.N.*`` address already on the device."""
    out = _ip("-o", "-4", "addr", "show", "dev", DEVICE)
    found = re.findall(r"inet (" + re.escape(PREFIX) + r"\.(\d+)\.\d+)/", out)
    return {int(n) for _, n in found}


def claim(count: int) -> list[str]:
    """Add ``count`` host addresses in a /24 no other lab uses; return them."""
    used = used_subnets()
    free = next((n for n in range(1, 255) if n not in used), None)
    if free is None:
        raise LabError(f"every {PREFIX}.N.0/24 on {DEVICE} is taken by another lab")
    hosts = [f"{PREFIX}.{free}.{i}" for i in range(1, count + 1)]
    added: list[str] = []
    try:
        for h in hosts:
            _ip("addr", "add", f"{h}/32", "dev", DEVICE)
            added.append(h)
    except LabError:
        release(added)
        raise
    return hosts


def release(hosts: list[str]) -> None:
    """Remove the lab's host addresses (those already gone are skipped)."""
    for h in hosts:
        ipaddress.ip_address(h)  # never pass anything but an address to `ip`
        try:
            _ip("addr", "del", f"{h}/32", "dev", DEVICE)
        except LabError:
            continue
