"""Finding the daemon: which socket to use and which tprobed to start.

With ``TPROBE_SOCKET`` set, that daemon is used and none is started unless
``TPROBE_AUTOSTART=1``: when nobody answers there, the client says so on
stderr while it loses records and at exit (client/outage_notice.h), and
takes up a daemon that comes up there later. Otherwise the default socket
is used and a private tprobed is started when none answers
(``TPROBE_AUTOSTART=0`` turns that off).
"""

import os
import shutil

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def socket_path() -> str:
    """The socket to connect to; empty lets the client core resolve it
    ($TPROBE_SOCKET, else $XDG_RUNTIME_DIR/tprobe/tprobed.sock, else
    /tmp/tprobe-<uid>/tprobed.sock)."""
    return os.environ.get("TPROBE_SOCKET", "")


def autostart() -> bool:
    """Whether to start a private tprobed when none answers."""
    value = os.environ.get("TPROBE_AUTOSTART")
    if value is not None:
        return value.strip().lower() not in ("0", "false", "no", "off", "")
    return not os.environ.get("TPROBE_SOCKET")


def daemon_binary() -> str:
    """The tprobed to start: $TPROBED, else the one inside this package (a
    wheel), else bin/tprobed of the build tree or installation that holds
    this package, else tprobed on PATH; empty when none is found."""
    explicit = os.environ.get("TPROBED")
    if explicit:
        return explicit
    # tprobe/bin (wheel); build/python/tprobe -> build/bin;
    # <prefix>/lib/python3.X/dist-packages/tprobe -> <prefix>/bin.
    for rel in (("bin",), ("..", "..", "bin"),
                ("..", "..", "..", "..", "bin")):
        candidate = os.path.normpath(
            os.path.join(_PACKAGE_DIR, *rel, "tprobed"))
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("tprobed") or ""
