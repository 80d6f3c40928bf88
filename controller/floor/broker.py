"""How every floor command reaches the MQTT broker: its options, checked in one place, and a
paho-mqtt 2.x client made from them.

``add_broker_options(parser, url_flag="--broker")`` adds ``URL`` (``mqtt://HOST[:PORT]``, default
port 1883; ``mqtts://HOST[:PORT]``, TLS, default port 8883), ``--tls-ca FILE``, ``--tls-cert FILE``,
``--tls-key FILE``, ``--username NAME``, ``--password-file FILE`` (the password is the file's first
line: never on the command line, where ``ps`` shows it), ``--client-id ID`` and ``--mqtt-version
5|3.1.1``. ``broker_options(args, url_flag)`` reads them into a ``BrokerOptions`` and raises
``BrokerError`` (a ``UsageError``: one line, exit 2) for a bad URL, TLS options without
``mqtts://``, a password file without a user name, or a file that cannot be read.

``make_client(options, client_id=..., persistent=False, will=None)`` returns a configured
``paho.mqtt.client.Client`` (``CallbackAPIVersion.VERSION2``), not yet connected;
``connect_in_background(client, options, persistent=...)`` connects it on paho's own network
thread, which retries with backoff (``RECONNECT_DELAY``) until the broker answers and after every
lost connection. ``persistent=True`` asks the broker to keep the session (and what arrives for
its subscriptions) while the client is away: MQTT 5 ``clean_start=False`` with a session expiry,
MQTT 3.1.1 ``clean_session=False``; it needs a fixed ``--client-id``. ``stop_client(client)``
disconnects, stops that thread and closes every socket the client holds.

``refusal(reason_code)`` says in the user's words why the broker refused a connection, and
``is_lasting_refusal`` whether retrying cannot help (a wrong password, not authorised, a broker set
up without QoS 1 or retained messages).
"""
from __future__ import annotations

import argparse
import os
import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from typing import TYPE_CHECKING

from controller.errors import UsageError, path_argument
from shoectl_config.extras import install_hint
from shoectl_config.files import NotARegularFile, require_regular_file
from shoectl_config.text import quoted

if TYPE_CHECKING:
    import paho.mqtt.client as mqtt

# paho-mqtt (the ``floor`` extra) is imported when a client is made, not with this module: every
# ``shoectl`` command builds its parser with the floor's options, and a table installed without
# the extra must still run. The protocol numbers are MQTT's own (paho's MQTTv311 and MQTTv5).
MQTT_V311 = 4
MQTT_V5 = 5


def paho_client() -> Any:
    """The ``paho.mqtt.client`` module; ``UsageError`` in the user's words when it is missing."""
    try:
        import paho.mqtt.client as client_module
    except ImportError:
        raise UsageError(f"the floor needs paho-mqtt, which is not installed: {install_hint('floor')}") from None
    return client_module

SCHEMES = {"mqtt": 1883, "mqtts": 8883}
VERSIONS = {"5": MQTT_V5, "3.1.1": MQTT_V311}
RECONNECT_DELAY = (0.25, 8.0)  # seconds: the first retry, and the longest wait between two
KEEPALIVE = 20
SESSION_EXPIRY = 7 * 24 * 3600  # a persistent session outlives a week's outage of its client
MQTT_PACKET_IDS = 65535  # a QoS 1 message in flight holds one of these: no window (Receive Maximum) may be wider
_CREDENTIALS_REFUSED = {134: "wrong user name or password",
                        135: "not authorised (a wrong user name or password, or a user it does not admit)"}
# A broker set up without what this program's connections need (MQTT 5 reason codes): a person
# must change its configuration, so retrying cannot help either.
_SETUP_REFUSED = {154: "it keeps no retained messages (retain_available false), which the table's status and the "
                       "connections' last wills need",
                  155: "it takes no QoS 1 messages (max_qos 0), which the floor needs to know that each entry "
                       "arrived"}
_MAX_PASSWORD_FILE = 64 * 1024
QOS_0_ONLY = 155  # MQTT 5's "QoS not supported": the words of a broker that takes QoS 0 only, however it said so
PORT_WORDS = "the port must be a number from 1 to 65535"


class BrokerError(UsageError):
    """A broker option or file that cannot be used; the message is one line in the user's words."""


@dataclass(frozen=True)
class BrokerOptions:
    """What ``broker_options`` read: where the broker is and how to log in (the password is
    kept out of ``repr``)."""

    url: str
    host: str
    port: int
    tls: bool
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    client_id: str | None = None
    protocol: int = MQTT_V5


# The broker's options besides its URL: given without the URL, they would do nothing.
BROKER_FLAGS = ("--tls-ca", "--tls-cert", "--tls-key", "--username", "--password-file", "--client-id", "--mqtt-version")


def add_broker_options(parser: argparse.ArgumentParser, *, url_flag: str = "--broker",
                       url_help: str = "the MQTT broker: mqtt://HOST[:PORT] (port 1883) or mqtts://HOST[:PORT] "
                                       "(TLS, port 8883)", required: bool = True, client_id_default: str) -> None:
    """Add the broker's options (see the module docstring) to ``parser``; ``client_id_default`` says
    in ``--client-id``'s help which id the command uses without it."""
    group = parser.add_argument_group("broker")
    group.add_argument(url_flag, metavar="URL", required=required, help=url_help)
    group.add_argument("--tls-ca", type=path_argument, metavar="FILE", help="CA certificates (PEM) to check the broker's certificate "
                                                         "with (default: the system's); mqtts:// only")
    group.add_argument("--tls-cert", type=path_argument, metavar="FILE", help="this client's certificate (PEM), for brokers that ask "
                                                           "for one; mqtts:// only")
    group.add_argument("--tls-key", type=path_argument, metavar="FILE", help="the private key of --tls-cert (PEM)")
    group.add_argument("--username", metavar="NAME", help="the MQTT user name (a table's is its table id under "
                                                           "the documented ACL)")
    group.add_argument("--password-file", type=path_argument, metavar="FILE", help="a file whose first line is the MQTT password "
                                                                "(never give a password on the command line)")
    group.add_argument("--client-id", metavar="ID", help=f"the MQTT client id (default: {client_id_default})")
    group.add_argument("--mqtt-version", choices=tuple(VERSIONS), default="5", help="MQTT protocol version "
                                                                                      "(default 5)")


def parse_broker_url(text: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]``; BrokerError."""
    bad = f"bad broker URL {quoted(_password_hidden(text)[:200])}: "
    if "@" in text:  # a user (and a password, which may hold a "/" or a ":") before the host
        raise BrokerError(bad + "no user name or password in the URL: use --username and --password-file")
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:  # an unbalanced [ of an IPv6 address
        raise BrokerError(bad + "expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]") from None
    try:
        port = parts.port
    except ValueError:  # not digits, or out of range
        raise BrokerError(bad + PORT_WORDS) from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise BrokerError(bad + "expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise BrokerError(bad + "only a host and a port may follow the scheme")
    if not parts.hostname:
        raise BrokerError(bad + "no host")
    if not _host_name_ok(parts.hostname):
        raise BrokerError(bad + f"{quoted(parts.hostname[:100])} is not a host name or an address")
    if port == 0:
        raise BrokerError(bad + PORT_WORDS)
    return parts.hostname, port or SCHEMES[scheme], scheme == "mqtts"


def _password_hidden(url: str) -> str:
    """``url`` with whatever comes before its host's ``@`` (``USER:PASSWORD``, the password maybe
    holding a ``/`` or a ``:``) shown as ``***``, after the scheme when it has one: the refusal of a
    URL holding a password must not copy it to standard error and the system's journal (security
    reviews: one with a "/" in it was printed whole)."""
    head, at, host = url.rpartition("@")
    if not at:
        return url
    scheme, sep, _ = head.partition("://")
    return f"{scheme}://***@{host}" if sep else f"***@{host}"


def _host_name_ok(host: str) -> bool:
    """Whether ``host`` can be looked up at all: an IP address, or a name whose labels the resolver
    takes (IDNA; an empty label, one over 63 characters or a character no name may hold fails
    there, inside the client's own thread)."""
    import ipaddress

    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    try:
        host.encode("idna")
    except UnicodeError:
        return False
    return True


def read_password_file(path: str) -> str:
    """The first line of ``path`` (without its line end); BrokerError when it cannot be read or
    holds no password."""
    try:
        require_regular_file(path)  # a FIFO would be waited on for a writer, without end
        with open(path, "rb") as fh:
            data = fh.read(_MAX_PASSWORD_FILE)
    except NotARegularFile as exc:
        raise BrokerError(f"cannot read the password file {exc}") from None
    except OSError as exc:
        raise BrokerError(f"{path}: cannot read the password file: {exc.strerror or exc}") from None
    line = data.splitlines()[0] if data else b""
    try:
        password = line.decode("utf-8")
    except UnicodeDecodeError:
        raise BrokerError(f"{path}: the password file is not UTF-8 text") from None
    if not password:
        raise BrokerError(f"{path}: the password file's first line is empty")
    return password


MQTT_STRING_MAX = 65_535  # bytes of UTF-8: an MQTT string's length is two bytes (MQTT 3.1.1 and 5, 1.5.3)


def _mqtt_string(what: str, value: str | None) -> None:
    """BrokerError unless ``value`` (if given) is a string MQTT can carry: not empty, at most
    65,535 bytes of UTF-8, no NUL character (the client would fail inside its own thread)."""
    if value is None:
        return
    if not value:
        raise BrokerError(f"{what} must not be empty")
    if "\0" in value:
        raise BrokerError(f"{what} holds a NUL character, which MQTT does not carry")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:  # bytes of the command line that were not UTF-8
        raise BrokerError(f"{what} is not UTF-8 text") from None
    if size > MQTT_STRING_MAX:
        raise BrokerError(f"{what} is {size:,} bytes long; MQTT carries at most {MQTT_STRING_MAX:,}")


def _readable(path: str | None, what: str) -> str | None:
    if path is not None and not os.access(path, os.R_OK):
        raise BrokerError(f"{path}: cannot read the {what}" + ("" if os.path.exists(path) else ": no such file"))
    if path is not None:
        try:
            require_regular_file(path)  # OpenSSL would wait on a FIFO for a writer, without end
        except NotARegularFile as exc:
            raise BrokerError(f"cannot read the {what} {exc}") from None
    return path


def broker_options(args: argparse.Namespace, *, url_flag: str = "--broker") -> BrokerOptions:
    """The ``BrokerOptions`` of parsed arguments (see the module docstring); BrokerError."""
    url = getattr(args, url_flag.lstrip("-").replace("-", "_"))
    host, port, tls = parse_broker_url(url)
    if not tls and (args.tls_ca or args.tls_cert or args.tls_key):
        raise BrokerError(f"--tls-ca, --tls-cert and --tls-key need an mqtts:// broker URL, not {url}")
    if args.tls_key and not args.tls_cert:
        raise BrokerError("--tls-key needs --tls-cert (the certificate it is the key of)")
    if args.password_file and not args.username:
        raise BrokerError("--password-file needs --username")
    _mqtt_string("--client-id", args.client_id)
    _mqtt_string("--username", args.username)
    password = read_password_file(args.password_file) if args.password_file else None
    _mqtt_string(f"the password in {args.password_file}", password)
    options = BrokerOptions(url, host, port, tls, _readable(args.tls_ca, "CA file"),
                            _readable(args.tls_cert, "certificate"), _readable(args.tls_key, "key file"),
                            args.username, password, args.client_id, VERSIONS[args.mqtt_version or "5"])
    check_tls_files(options)
    return options


def check_tls_files(options: BrokerOptions) -> None:
    """BrokerError, in the user's words, for a CA file that holds no certificate, a certificate
    file that is not one, or a key that is not the certificate's (ssl's own messages name its C
    source, not the file)."""
    if options.tls_ca:
        try:
            ssl.create_default_context().load_verify_locations(cafile=options.tls_ca)
        except (ssl.SSLError, ValueError):
            raise BrokerError(f"--tls-ca {options.tls_ca}: not a certificate file (PEM)") from None
    if not options.tls_cert:
        return
    try:
        ssl.create_default_context().load_cert_chain(options.tls_cert, options.tls_key)
        return
    except (ssl.SSLError, ValueError) as exc:
        mismatch = "KEY_VALUES_MISMATCH" in str(getattr(exc, "reason", "") or exc)
    if mismatch:
        raise BrokerError(f"--tls-key {options.tls_key or options.tls_cert}: the TLS key does not match the "
                          f"certificate {options.tls_cert}")
    try:
        ssl.create_default_context().load_verify_locations(cafile=options.tls_cert)
    except (ssl.SSLError, ValueError):
        raise BrokerError(f"--tls-cert {options.tls_cert}: not a certificate file (PEM)") from None
    if options.tls_key:
        raise BrokerError(f"--tls-key {options.tls_key}: not a private key file (PEM, without a passphrase)")
    raise BrokerError(f"--tls-cert {options.tls_cert}: holds no private key; give it with --tls-key FILE")


def make_client(options: BrokerOptions, *, client_id: str, persistent: bool = False,
                will: tuple[str, str] | None = None) -> mqtt.Client:
    """A paho client configured from ``options`` (not connected). ``client_id`` is used unless the
    options name one. ``will``: ``(topic, payload)`` the broker publishes, retained, QoS 1, when the
    connection is lost without a goodbye. BrokerError for TLS files that do not load."""
    mqtt = paho_client()
    from paho.mqtt.enums import CallbackAPIVersion

    v311 = options.protocol == MQTT_V311
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=options.client_id or client_id,
                         protocol=options.protocol, clean_session=(not persistent) if v311 else None)
    client.reconnect_delay_set(*RECONNECT_DELAY)
    if options.username is not None:
        client.username_pw_set(options.username, options.password)
    if options.tls:
        try:
            client.tls_set(ca_certs=options.tls_ca, certfile=options.tls_cert, keyfile=options.tls_key)
        except (OSError, ssl.SSLError, ValueError):
            check_tls_files(options)  # says which file and why
            raise BrokerError("cannot use the TLS files (--tls-ca, --tls-cert, --tls-key)") from None
    if will is not None:
        client.will_set(will[0], will[1], qos=1, retain=True)
    return client


def connect_in_background(client: mqtt.Client, options: BrokerOptions, *, persistent: bool = False,
                          receive_maximum: int | None = None) -> None:
    """Connect on paho's network thread (``loop_start``), which retries until the broker answers.
    ``receive_maximum`` (MQTT 5): the most QoS 1 messages the broker may have sent this client and
    not yet had acknowledged, so that a client acknowledging after its own work never receives more
    than it can hold without blocking paho's thread."""
    kwargs: dict[str, Any] = {"keepalive": KEEPALIVE}
    if options.protocol == MQTT_V5:
        kwargs["clean_start"] = not persistent
        if persistent or receive_maximum:
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties

            props = Properties(PacketTypes.CONNECT)
            if persistent:
                props.SessionExpiryInterval = SESSION_EXPIRY
            if receive_maximum:
                props.ReceiveMaximum = min(receive_maximum, MQTT_PACKET_IDS)
            kwargs["properties"] = props
    client.connect_async(options.host, options.port, **kwargs)
    client.loop_start()


def stop_client(client: mqtt.Client) -> None:
    """Disconnect, stop paho's network thread and close every socket the client holds, now.

    ``loop_stop`` leaves open the socket pair ``loop_start`` made to wake the thread (paho closes
    it only in ``Client.__del__``: eclipse-paho/paho.mqtt.python#627). A client held in a
    reference cycle (its callbacks are bound methods of its owner) is then finalized by the cyclic
    collector, whenever that runs, after its sockets: two file descriptors held until then, and
    two "unclosed socket" warnings. Call from any thread but paho's own."""
    client.disconnect()
    client.loop_stop()
    reset_sockets = getattr(client, "_reset_sockets", None)  # private: what paho 2.x's __del__ calls
    if reset_sockets is not None:
        reset_sockets()


def is_lasting_refusal(reason_code: Any) -> bool:
    """Whether a CONNACK's reason code is a refusal retrying cannot help: the credentials, or the
    broker's own setup (it takes no QoS 1, keeps no retained messages)."""
    value = getattr(reason_code, "value", reason_code)
    return value in _CREDENTIALS_REFUSED or value in _SETUP_REFUSED


def refusal(reason_code: Any, options: BrokerOptions) -> str:
    """Why the broker at ``options`` refused the connection, one line."""
    value = getattr(reason_code, "value", reason_code)
    who = f" as {options.username}" if options.username else " without a user name"
    words = _CREDENTIALS_REFUSED.get(value)
    if words is not None:
        return f"the broker {options.url} refused the connection{who}: {words}"
    words = _SETUP_REFUSED.get(value)
    if words is not None:
        return f"the broker {options.url} refused the connection: {words}"
    return f"the broker {options.url} refused the connection: {reason_code}"


def stated_reason(reason_code: Any) -> str | None:
    """The reason a broker gave for closing a connection, in its words (MQTT 5: "Session taken
    over"), or None when it gave none: paho's own for a connection that dropped ("Unspecified
    error", 128) and a normal disconnection (0) say nothing a probe of the port does not say better."""
    return str(reason_code) if getattr(reason_code, "value", 128) not in (0, 128) else None
