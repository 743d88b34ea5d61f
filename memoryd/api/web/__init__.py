"""The web view at /ui: server-rendered pages over one service, `WebView` (views.py), with no second write path.

Kept import-light: the API middleware imports `memoryd.api.web.auth`; the pages live in `memoryd.api.web.routes`.
"""
