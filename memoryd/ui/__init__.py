"""The web view at /ui: server-rendered pages over the daemon's parts (no second write path).

Kept import-light: the API middleware imports `memoryd.ui.auth`; the pages live in `memoryd.ui.routes`.
"""
