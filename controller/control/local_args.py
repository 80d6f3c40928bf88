"""What a command's arguments become from what lives on this computer and not in the journal,
before the table is given them (on the connection's thread, like ``requests``' checks):
``set_submission``'s preset or file (of the submissions folder only) read into the submission
itself, so that replaying the journal never reads a file; ``unlock_operator``'s id checked against
the operators file. ``BadRequest`` when that fails."""
from __future__ import annotations

from typing import Any

from controller.control.requests import BadRequest, Request, shown_text
from controller.operators.pins import pin_shaped_hidden, pin_shaped_id_hidden

__all__ = ["table_args"]


def table_args(req: Request, submissions: Any, auth: Any) -> dict[str, Any]:
    """The arguments the table is given for ``req`` (see the module docstring); ``submissions``:
    the folder ``set_submission`` may name files of (None: presets only); ``auth``: the
    ``Authenticator`` that knows the operators."""
    args = req.args
    if req.command == "set_submission":
        from controller.rules.errors import RulesError
        from controller.rules.submission import submission_in_folder

        try:
            sub = submission_in_folder(args.get("submission"), submissions)
        except (RulesError, OSError) as exc:
            said, name = str(exc), args.get("submission")
            if (hidden := pin_shaped_hidden(name)) is not None:  # a PIN typed there: not told back
                said = said.replace(name.strip(), hidden)
            raise BadRequest(shown_text(said, 400), req.rid) from None  # room for the folder and its files
        return {"submission": {k: v for k, v in sub.to_dict().items() if k != "source"}, "source": sub.source}
    if req.command == "unlock_operator" and not auth.knows(args["operator"]):
        # a PIN typed where the id goes is not echoed to the reply, the journal nor the streams (a review of roles)
        shown = pin_shaped_id_hidden(args["operator"]) or f"'{shown_text(args['operator'])}'"
        raise BadRequest(f"no operator {shown} in this table's operators file", req.rid)
    return args
