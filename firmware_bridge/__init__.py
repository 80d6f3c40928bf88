"""shoectl's device bridge: the wire protocol, transports, the link pump and the device emulator.

``firmware_bridge.protocol`` is the sans-I/O core (bytes in -> typed events out, typed messages in
-> bytes out) shared by the host (the controller) and the device (a shuffler or shoe, real or
emulated). The written protocol, for firmware implementers, is ``docs/protocol.md``.
"""
