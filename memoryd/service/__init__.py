"""The daemon as a running service: `Daemon` (the composition root), what it reports, its timers, its
token and runtime file, and the systemd/launchd units that keep it running. Serving it over HTTP is
`memoryd/server.py`, above the API (which reads the token and the status from here).

Nothing is imported here: `memoryd` commands read the token and the runtime file without loading the daemon."""
