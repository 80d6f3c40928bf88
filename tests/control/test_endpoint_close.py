"""The control socket's close, which comes before the journal's in every stop."""
from __future__ import annotations

from pathlib import Path


def test_a_socket_its_folder_no_longer_lets_go_is_a_warning_and_the_close_goes_on(tmp_path: Path, monkeypatch,
                                                                                  capsys) -> None:
    """A review of operations: the journal's folder made read-only while the table ran, the stop
    raised at removing the socket ("t.sock: Permission denied", exit 2), and the journal was never
    closed nor its last anchor written. The removal is refused here by a stand-in (root passes any
    folder's permissions)."""
    from controller.control.endpoint import ControlEndpoint
    from controller.logconfig import configure_logging

    configure_logging(level="warning")
    endpoint = ControlEndpoint(tmp_path / "t.sock", group=None)
    endpoint.claim()
    endpoint.listen(backlog=1)

    def refused(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", refused)
    endpoint.close()  # no exception: the caller goes on to close the journal
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert "control socket not removed; the next start replaces it" in err and "Permission denied" in err
    assert (tmp_path / "t.sock").exists()
    again = ControlEndpoint(tmp_path / "t.sock", group=None)  # and the next start does
    again.claim()
    again.listen(backlog=1)
    again.close()
    assert not (tmp_path / "t.sock").exists()
