"""Who, on the control socket, is told surveillance's events (``controller.table.subscribers``:
the edge monitor's ``edge`` and ``edge_alert`` records and its notice, which say which wager
favours the player now and by how much).

``sees_surveillance(uid, table_uid=None)``: True for the superuser, for the table's own account
(the service's: ``table_uid``, by default this process's effective user) and for the members of
the group ``SURVEILLANCE_GROUP`` (``shoectl-surveillance``: an account whose primary group it is,
or that the account database lists in it); False for any other account, for one the database
does not know, for a group that does not exist, and for a connection whose account cannot be told
(``uid`` None). The table's staff, the group ``shoectl-operators`` that may reach the socket, are
not surveillance: told that Dragon 7 favours the player, a dealer could tell a player when to wager
it (a security review). The lookups may ask the network (NSS): the server makes them once per
subscription, on the connection's own thread.
"""
from __future__ import annotations

import grp
import os
import pwd

__all__ = ["SURVEILLANCE_GROUP", "sees_surveillance"]

SURVEILLANCE_GROUP = "shoectl-surveillance"


def sees_surveillance(uid: int | None, table_uid: int | None = None) -> bool:
    """See the module docstring."""
    if uid is None:
        return False
    if uid in (0, os.geteuid() if table_uid is None else table_uid):
        return True
    try:
        gid = grp.getgrnam(SURVEILLANCE_GROUP).gr_gid
        account = pwd.getpwuid(uid)
    except KeyError:
        return False
    return gid == account.pw_gid or gid in os.getgrouplist(account.pw_name, account.pw_gid)
