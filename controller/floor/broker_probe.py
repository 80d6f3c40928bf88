"""What a probe of the broker's port finds, in the user's words, for the floor's clients: whether
an ``mqtts://`` broker's certificate is trusted (``check_tls_trust``: before connecting, since
retrying cannot mend it), and why a broker cannot be spoken to once a client failed
(``reach_problem``: said in the outage's one line, while the client retries)."""
from __future__ import annotations

import errno
import socket
import ssl

from controller.floor.broker import BrokerError, BrokerOptions


# OpenSSL's verify codes (X509_V_ERR_...) a person meets, in words; any other: "was refused (its text)".
_CERTIFICATE_WORDS = {
    9: "is not valid yet", 10: "has expired", 18: "is self-signed, by no CA this machine trusts",
    19: "is signed by a CA this machine does not trust", 20: "is signed by a CA this machine does not trust",
    21: "is signed by a CA this machine does not trust", 62: "does not name {host}",
}


def check_tls_trust(options: BrokerOptions, timeout: float = 5.0) -> None:
    """For an ``mqtts://`` broker: BrokerError, one line, when its certificate is not trusted with
    the options' CA file (or the system's) or does not name its host — retrying cannot help, and
    paho's reconnecting thread would only retry. A broker that cannot be reached is not an error
    here (the client waits for it)."""
    if not options.tls:
        return
    context = ssl.create_default_context(cafile=options.tls_ca)
    if options.tls_cert:
        context.load_cert_chain(options.tls_cert, options.tls_key)
    try:
        with socket.create_connection((options.host, options.port), timeout=timeout) as raw, \
                context.wrap_socket(raw, server_hostname=options.host):
            return
    except ssl.SSLCertVerificationError as exc:
        why = _CERTIFICATE_WORDS.get(exc.verify_code) or (
            f"was refused ({exc.verify_message or ' '.join(str(exc).split())})")
        raise BrokerError(f"the broker {options.url} is not trusted: its certificate {why.format(host=options.host)}"
                          f"{'' if options.tls_ca else ' (give its CA with --tls-ca FILE)'}") from None
    except (OSError, ssl.SSLError):
        return  # not there yet, or not TLS: the client says so as it retries


def nothing_listens(options: BrokerOptions, timeout: float = 0.5) -> bool:
    """Whether the broker's port refuses a TCP connection right now (the broker down, or going
    down to restart): what tells a broker that went away from another client that took this
    connection (``controller.floor.brief_connections``). Anything else (it answers, or does not
    within ``timeout``) is not said to be down."""
    try:
        socket.create_connection((options.host, options.port), timeout=timeout).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False


def reach_problem(options: BrokerOptions, *, dropped: bool = False, timeout: float = 2.0) -> str | None:
    """Why the broker at ``options`` cannot be spoken to, in the user's words, from a probe made
    after the client failed: its host does not resolve or has no route, this process may not connect
    (a sandbox), nothing listens on its port, the port does not answer, an ``mqtts://`` port that does not speak TLS, or (``dropped``: the connection was
    closed before any CONNACK) a plain port that closed it. None when the probe sees nothing wrong
    (the client says only that it retries). Blocks up to ``timeout`` seconds twice; call it once an
    outage, not once a retry."""
    host, port = options.host, options.port
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return f"cannot resolve host {host}"
    try:
        raw = socket.create_connection((host, port), timeout=timeout)
    except ConnectionRefusedError:
        return f"nothing listens on port {port} of {host}"
    except TimeoutError:
        return f"port {port} of {host} does not answer within {timeout:g} s"
    except OSError as exc:
        if exc.errno in (errno.EPERM, errno.EACCES, errno.EAFNOSUPPORT):
            return ("this process may not open that connection (a sandbox: the service unit's "
                    "RestrictAddressFamilies and IPAddressAllow, docs/deployment.md)")
        if exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return f"no route to {host} from this machine"
        return None
    with raw:
        if not options.tls:
            return (f"port {port} of {host} closed the connection without an MQTT answer: a TLS listener? then "
                    "mqtts://") if dropped else None
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # only whether TLS is spoken: trust is check_tls_trust's
        try:
            with context.wrap_socket(raw, server_hostname=host):
                return None
        except ssl.SSLError:
            return None  # TLS answered (a refusal in TLS is not a plain port)
        except OSError:
            return f"port {port} of {host} answers, but not with TLS: a plain mqtt:// listener?"
