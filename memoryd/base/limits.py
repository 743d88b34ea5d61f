"""Every number the spec and the seeds fix, named once with its source.

Nothing here has logic; modules import the names. Values that a user may tune are the
*defaults* of settings in `memoryd.config`, which also reads them from here.
"""

from __future__ import annotations

import sys

# --- memdir (spec §1; seeds: memdir.ts, memoryScan.ts) ---------------------------------
INDEX_FILENAME = "MEMORY.md"  # ENTRYPOINT_NAME
INDEX_MAX_LINES = 200  # MAX_ENTRYPOINT_LINES
INDEX_MAX_BYTES = 25_000  # MAX_ENTRYPOINT_BYTES
INDEX_ENTRY_MAX_CHARS = 150  # "keep entries under ~150 chars"
SCAN_MAX_FILES = 200  # memoryScan.ts MAX_MEMORY_FILES
FRONTMATTER_MAX_LINES = 30  # memoryScan.ts FRONTMATTER_MAX_LINES
# Issue 31: a 361-byte YAML alias bomb took the daemon to 5 GB. Anchors/aliases are refused and the
# YAML is bounded before it is loaded: a real header is a few hundred bytes, two levels deep.
FRONTMATTER_MAX_BYTES = 16 * 1024
FRONTMATTER_MAX_DEPTH = 8
FRONTMATTER_MAX_NODES = 2_000
MEMORY_TYPES = ("user", "feedback", "project", "reference")  # closed taxonomy
MEMORY_DIRNAME = "memory"  # AUTO_MEM_DIRNAME
PROJECTS_DIRNAME = "projects"
SANITIZED_PATH_MAX = 200  # sessionStoragePortable.ts MAX_SANITIZED_LENGTH
DAILY_LOGS_DIRNAME = "logs"  # paths.ts getAutoMemDailyLogPath: logs/YYYY/MM/YYYY-MM-DD.md

# Our own bounds on one memory (spec §8 "oversized bodies"); the bench's largest body is 825 B.
MEMORY_NAME_MAX_CHARS = 200
MEMORY_DESCRIPTION_MAX_CHARS = 500
MEMORY_BODY_MAX_BYTES = 64 * 1024
# What a memory applies to is read from its first this many characters: a rule names its paths and commands
# early, and a hand-written file of 900 KB held the GIL for 0.5 s while it was derived (health stalled).
APPLIES_DERIVE_MAX_CHARS = 16 * 1024
SLUG_MAX_CHARS = 80
MEMORY_PAGE_MAX = 100  # one page of the MCP memory_search tool (the REST list pages up to LIST_PAGE_MAX)
MEMORY_FILE_MAX_BYTES = 1024 * 1024  # a hand-written file over this is listed invalid, never read whole
STORE_REGISTRY_MAX_DIRS = 512  # memory dirs kept open (LRU); 5,000 distinct cwds must not grow memory
# Group commit (issue 31: saves queued behind one writer, each rewriting MEMORY.md): while writers queue
# for a dir's lock, their index lines are published together, at most this long after the first.
GROUP_COMMIT_SECONDS = 0.02
GROUP_COMMIT_WAIT_SECONDS = 5.0  # a deferred writer publishes the group itself after waiting this long
WRITE_CHANGED_RETRIES = 3  # a file edited by someone else while a save builds its text is re-read this often
WRITE_ECHOES_KEPT = 4096  # our last writes per dir, to tell the watcher's echo of each from someone else's change

# --- recall (spec §2; seeds: findRelevantMemories.ts, attachments) ----------------------
RECALL_MAX_MEMORIES = 5  # "up to 5"
RECALL_FILE_MAX_LINES = 200  # per-file truncation
RECALL_FILE_MAX_BYTES = 4_096  # MAX_MEMORY_BYTES_PER_FILE
RECALL_SESSION_BUDGET_BYTES = 60 * 1024  # MAX_SESSION_MEMORY_BYTES, "60KB"
FRESHNESS_AFTER_DAYS = 1  # caveat when older than one day
RECALL_SIDE_QUERY_MAX_TOKENS = 256  # sideQuery max_tokens
RECALL_SIDE_QUERY_CANDIDATES = 50  # issue 3: local pre-selection above 50 memories
RECALL_MODEL_FOLLOWUP_WAIT_SECONDS = 20.0  # the async hook waits this long for the model's pick (its process: 25 s)
# async hooks that may wait for the model at once, each holding one of the server's 40 worker threads; the rest answer
# with what is ready (the pick still reaches the turn at its next tool call). Issue 52: 45 waiting held them all.
RECALL_MODEL_FOLLOWUP_WAITERS = 8
RECALL_SIDE_QUERY_RECENT_ITEMS = 10  # the session's latest files and commands shown to the side-query
RECALL_DEADLINE_SECONDS = 2.0  # issue 3: default deadline before the local result is served
RECALL_SESSION_TTL_HOURS = 24  # surfaced sets expire with the session
RECALL_COMPUTING_AT_ONCE = 3  # recalls ranking at once (the rest queue): about the cores, plus one waiting on the disk
RECALL_QUERY_ENGINE_THREADS = 1  # OpenMP threads for a prompt's embedding (issue 42: faster than 2 for ~16 tokens)
# A prompt's tokens its embedding reads, from its start and end (the lexical ranking reads all of it): ~1 ms a
# token, and the engine embeds any length in 512-token windows (a pasted 20 KB log: seconds on every prompt).
RECALL_QUERY_EMBED_MAX_TOKENS = 128
RECALL_SESSION_EXPIRE_EVERY_SECONDS = 60.0  # how often recall looks for idle sessions to forget
TOOL_RECALL_MAX_MEMORIES = 2  # issue 38: a tool call gets at most two memories
CONTEXT_FILES_MET = 8  # a prompt's recall: the session's most recent files whose memories it meets (issue 49)
TOOL_RECALL_EDIT_CHARS = 2_000  # what an Edit/Write writes, at most this much of it, weighs in the tool-time query
TOOL_RECALL_REPEATS_KEPT = 4_096  # (session, memory) pairs repeated at a contradicting command, remembered
APPLIES_TO_MAX_ITEMS = 20  # per list of a memory's applies_to (paths, commands, tools)
APPLIES_TO_ITEM_MAX_CHARS = 200  # one glob or command
COMMAND_PARSE_MAX_CHARS = 8 * 1024  # of a Bash command, read word by word (a 250 KB heredoc is cut, not parsed whole)
COMMAND_PARSE_MAX_WORDS = 512  # words kept per command line
GLOBS_CACHED = 65_536  # compiled path globs kept (issue 52: a store of 10,000 globs compiles each once)
GLOB_PATHS_CACHED = 1_024  # paths whose character positions are kept for the globs matched against them
LIST_PAGE_DEFAULT = 1_000  # GET /v1/memories page size (issue 17: 20,000 memories in one answer took 480 ms)
LIST_PAGE_MAX = 10_000

# --- extraction (spec §3; seeds: extractMemories.ts) -----------------------------------
EXTRACT_EVERY_N_TURNS = 1  # tengu_bramble_lintel default
EXTRACT_QUEUE_MAX = 1_000  # bounded job queue
EXTRACT_MAX_ATTEMPTS = 3

# --- session memory (spec §5; seeds: sessionMemoryUtils.ts) -----------------------------
SESSION_MEMORY_INIT_TOKENS = 10_000  # minimumMessageTokensToInit
SESSION_MEMORY_UPDATE_TOKENS = 5_000  # minimumTokensBetweenUpdate
SESSION_MEMORY_TOOL_CALLS = 3  # toolCallsBetweenUpdates
SESSION_MEMORY_SECTION_MAX_TOKENS = 2_000  # MAX_SECTION_LENGTH
SESSION_MEMORY_MAX_TOKENS = 12_000  # total budget
SESSION_MEMORY_DELTA_MAX_TOKENS = 30_000  # transcript delta sent to the model (most recent kept)
SESSION_MEMORY_FILENAME = "session-memory.md"
SESSION_MEMORY_CACHED_READS = (
    16  # sessions whose transcript read is kept, so the next update reads only the appended part
)
SESSIONS_DIRNAME = "sessions"  # $MEMORYD_HOME/sessions/<session_id>/session-memory.md
CHARS_PER_TOKEN = 4  # the one token estimate used everywhere (bytes/4, as CC's roughTokenCount)

# --- auto-dream (spec §6; seeds: autoDream.ts, consolidationLock.ts) --------------------
DREAM_MIN_HOURS = 24.0  # minHours
DREAM_SCAN_INTERVAL_SECONDS = 10 * 60  # SESSION_SCAN_INTERVAL_MS
DREAM_MIN_SESSIONS = 5  # minSessions
DREAM_LOCK_FILENAME = ".consolidate-lock"  # LOCK_FILE
DREAM_LOCK_STALE_SECONDS = 60 * 60  # HOLDER_STALE_MS
DREAM_CHECK_INTERVAL_SECONDS = 10 * 60  # how often the scheduler looks at the gates
NEAR_DUPLICATE_SIMILARITY = (
    0.6  # extraction and dream: stemmed, synonym-folded overlap (base/similarity.py) counted as one memory
)
DREAM_LLM_CONTEXT_MAX_CHARS = 60_000  # manifest + file contents + daily logs shown to the dream LLM
DREAM_LLM_FILE_MAX_CHARS = 4_000  # per file in that context (MAX_MEMORY_BYTES_PER_FILE-sized)
DREAM_LLM_MAX_TOKENS = 4_096  # the dream plan answer

# --- transcripts (spec §4) -------------------------------------------------------------
GREP_MAX_RESULTS = 100
GREP_DEFAULT_RESULTS = 20
GREP_SNIPPET_CHARS = 240
GREP_MIN_TERM_CHARS = 3  # shorter terms match nearly every line: refused as catch-all
GREP_PATTERN_MAX_CHARS = 256  # bounds regex compile/backtracking cost
GREP_REPEAT_MAX = 1000  # the largest count in a {n,m} repeat (ripgrep's compiled size stays small)
GREP_CHUNK_BYTES = 1024 * 1024  # the built-in scanner reads files in chunks of this size, never whole
GREP_LINE_MAX_BYTES = 4 * 1024 * 1024  # a longer line is searched (and returned) in pieces of this size
GREP_DEADLINE_SECONDS = 10.0  # a scan stops here and returns partial results flagged truncated
GREP_RIPGREP_BATCH_BYTES = 1024 * 1024 * 1024  # rg's first batch of newest files (one rg process); each next one is 4x
GREP_RIPGREP_ARGS_CHARS = 30_000 if sys.platform == "win32" else 120_000  # file paths on one rg command line

# --- the settings' ranges (issue 41: `inf` or 1e308 passed `memoryd config`, then `serve` died) ---------
SETTING_MAX_SECONDS = 365 * 24 * 3600  # an interval, delay or age: at most a year
SETTING_MAX_TIMEOUT_SECONDS = 3600  # one call (an LLM, git) waits at most an hour
SETTING_MAX_COUNT = 1_000_000  # a count: turns, sessions, tool calls, entries, candidates, pushes
SETTING_MAX_TOKENS = 10**12  # a token budget
SETTING_MAX_BYTES = 1 << 30  # a byte budget
RECALL_DEADLINE_MAX_SECONDS = 60  # recall answers a prompt: past a minute the hook has long given up

# --- service (spec §7, §9; issue 2) ---------------------------------------------------
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7377
DEFAULT_HOME = "~/.memoryd"  # $MEMORYD_HOME when unset
TOKEN_FILENAME = "token"  # $MEMORYD_HOME/token: the bearer token (service/auth.py writes it)
RUNTIME_FILENAME = "daemon.json"  # $MEMORYD_HOME/daemon.json: where the daemon listens (service/runtime_file.py)
LOG_DIRNAME, LOG_FILENAME = "logs", "memoryd.log"  # the daemon's log: $MEMORYD_HOME/logs/memoryd.log (`memoryd logs`)
REQUEST_MAX_BYTES = 256 * 1024  # bodies over 256 KB → 413
# `memoryd import` (issue 31: a 597 KB .tar.gz inflating to 600 MB took the CLI to 1.24 GB). Each file is
# sized before it is read (a tar member by its header): one over what a save can carry is skipped.
IMPORT_FILE_MAX_BYTES = REQUEST_MAX_BYTES
IMPORT_MAX_FILES = 20_000  # files (or JSON lines) looked at in one import: the store's scale target
IMPORT_MAX_BYTES = 64 * 1024 * 1024  # text held by one import; past it the rest is reported, not read
TOKEN_FILE_MODE = 0o600
TOKEN_BYTES = 32
# Issue 52: a program on memoryd's port that drips one byte every 0.5 s held every client for good (a socket's
# timeout is per read), and an endless chunked answer took `memoryd list` to 1.5 GB. Each call of a client of
# memoryd's (the CLI, the MCP server, the hook) ends by one deadline and reads a bounded answer.
CLIENT_CALL_SECONDS = 10.0  # a CLI or MCP call's whole deadline unless the command names its own (recall 30, grep 60)
CLIENT_PROOF_SECONDS = 5.0  # of it, the identity proof on a new connection at most (memoryd answers it in ~2 ms)
CLIENT_PROOF_MAX_BYTES = 64 * 1024  # the answer to the challenge, head included (memoryd's is ~0.3 KB)
CLIENT_ANSWER_MAX_BYTES = 64 * 1024 * 1024  # an answer of the proven daemon (10,000 memories listed: ~10 MB)
HOOK_ANSWER_MAX_BYTES = 1024 * 1024  # a hook's answer (Claude Code keeps 10,000 chars of it)

# --- Claude Code integration (integration doc §5) -------------------------------------
CLAUDE_CODE_CONTEXT_MAX_CHARS = 10_000  # additionalContext cap
# Issue 41: a cloned repo's `.claude/settings.json` linked to /dev/zero took the daemon to 1.5 GB. A settings
# file over this (Claude Code's are a few KB) is ignored unread, like a FIFO or a device; memoryd's config.toml
# over it is refused.
SETTINGS_FILE_MAX_BYTES = 1024 * 1024
GIT_POINTER_MAX_BYTES = 8 * 1024  # a small file a repo's files point at: `.git`'s `gitdir:`, a hook's `-H @file`

# Every text memoryd injects into an agent's context (recall blocks, SessionStart index, session
# notes) carries this marker, so the transcript parser never mistakes it for the user's words
# (otherwise memoryd would re-save its own recalls every turn).
INJECTED_MARKER = "<!-- memoryd -->"

# Claude Code flushes transcripts on a ~100 ms timer and may fire Stop before the last lines
# land (integration doc §1.2): a turn-end job waits this long before it reads the file, and a
# transcript that does not exist yet is retried after EXTRACT_RETRY_SECONDS.
EXTRACT_SETTLE_SECONDS = 0.5
EXTRACT_RETRY_SECONDS = 1.0

# Extraction bookkeeping (finished jobs, per-session cursors and seen-entry ids) is kept as long
# as Claude Code keeps the transcripts it refers to: `cleanupPeriodDays`, default 30 (integration
# doc §1). Older rows are pruned at start and then hourly, so the state DB does not grow for ever.
EXTRACT_RETENTION_DAYS = 30
EXTRACT_PRUNE_EVERY_SECONDS = 3600.0
# A row of the derived and vector caches ($MEMORYD_HOME/recall-*.sqlite) unused this many days is dropped when the file
# is opened: a memory in use is read back at each daemon start, so a row idle for a month belongs to an edited or
# deleted memory or to a project not opened for a month (as long as Claude Code keeps its transcripts, above), and
# coming back only costs deriving or embedding that text once. The file serves every project's store, so age is the
# only reason a row goes; it is counted from the file's newest use, not the clock (a machine left off keeps them).
CACHE_UNUSED_DAYS = 30
CACHE_VACUUM_MIN_FREE_PAGES = 256  # a cache file is compacted after a prune that freed this many pages (1 MB) or more

# Transcripts are ingested in batches of this many bytes, so a large new file (a session found
# at start-up) is never held in memory whole: a 100 MB transcript peaks at +26 MB RSS, not +289.
TRANSCRIPT_READ_BATCH_BYTES = 2 * 1024 * 1024
# Backfill jobs are paced: the worker rests this long after each, so mining old transcripts never hogs the model or the
# CPU.
BACKFILL_PAUSE_SECONDS = 1.0
# A transcript line over this is skipped and counted, never parsed: bounded memory whatever a tool printed.
TRANSCRIPT_LINE_MAX_BYTES = 16 * 1024 * 1024

# After a compaction Claude Code fires SessionStart(source=compact): memoryd leads that context
# with the session's notes, this many characters at most, and fits the memory index in the rest
# of Claude Code's 10,000-character cap.
SESSION_NOTES_CONTEXT_MAX_CHARS = 5_000
# The user's global `user` memories open every session (as Claude Code's user-level CLAUDE.md does), within
# this many characters of that 10,000 cap: a few "how I like to work" notes, never the room the index needs.
USER_MEMORY_CONTEXT_MAX_CHARS = 2_000

# Recall sweeps a memory dir the watcher does not follow (one scandir + stat per file) on every
# request, so hand edits are seen at once; a followed dir's events name its changed files instead.
# A dir of at least RECALL_WATCHED_SWEEP_MIN_FILES memories is swept in the background, at most once
# per RECALL_WATCHED_SWEEP_SECONDS when unwatched (a sweep of 20,000 files costs ~50 ms).
RECALL_WATCHED_SWEEP_MIN_FILES = 1_000
RECALL_WATCHED_SWEEP_SECONDS = 1.0
# A memory dir of at least this many files: reads trust the dir's mtime and the watcher's events
# instead of a stat of every file, with a full sweep at most once per RECALL_WATCHED_SWEEP_SECONDS
# (unwatched) or STORE_WATCHED_SWEEP_SECONDS (watched).
STORE_WATCHED_TRUST_MIN_FILES = 1_000
STORE_WATCHED_SWEEP_SECONDS = 60.0

# Input checks shared by the API models and the core (memoryd/base/validation.py).
SESSION_ID_MAX_CHARS = 128  # Claude Code's ids are 36-char UUIDs; room for other agents' ids
PATH_COMPONENT_MAX_BYTES = 255  # NAME_MAX on Linux and macOS: a longer component cannot exist
PATH_MAX_BYTES = 4096  # PATH_MAX on Linux

# --- LLM backends (issue 16) -------------------------------------------------------------
LLM_RETRIES = 3  # background calls retry 429/529/5xx/connection errors this often; recall never retries
LLM_RETRY_BASE_SECONDS = 1.0  # backoff 1, 2, 4 s … unless the server sends retry-after
LLM_RETRY_MAX_WAIT_SECONDS = 60.0  # a longer retry-after is cut to this
LLM_MALFORMED_RETRIES = 1  # a reply that fails the pydantic schema is asked for once more
LLM_CLI_MAX_QUEUE = 4  # claude-cli runs one call at a time; this many more may wait
RECALL_MANIFEST_MAX_BYTES = 4_096  # the side-query's manifest, whatever the store's size (the lowest-ranked lines go)
RECALL_MANIFEST_DESCRIPTION_MAX_CHARS = 150  # per manifest line, like a MEMORY.md entry
LLM_CLI_DEFAULT_MODEL = "haiku"  # small and fast: memoryd's calls are short classification/extraction jobs

# --- team memory through git (issue 22; seeds: tengu_team_mem_* events) ---------------
TEAM_DIRNAME = "team"  # <memory dir>/team/, Claude Code's team memory folder
GLOBAL_DIRNAME = "global"  # $MEMORYD_HOME/global/: the user's own memories, listed and recalled in every project
TEAM_DEFAULT_BRANCH = "memory"
TEAM_SYNC_INTERVAL_MINUTES = 5.0
TEAM_DEBOUNCE_SECONDS = 30.0  # a sync this long after the last team write
TEAM_MAX_ENTRIES = 200  # entries_capped: as many as one manifest scan reads (SCAN_MAX_FILES)
TEAM_MAX_PUSH_BYTES = 256 * 1024  # push_suppressed: changed bytes one sync may push
TEAM_MAX_PUSHES_PER_HOUR = 30  # push_suppressed: pushes per rolling hour
TEAM_RETRY_BASE_SECONDS = 30.0  # remote down: retry after 30 s, 60 s, 120 s ... up to the max
TEAM_RETRY_MAX_SECONDS = 3600.0
TEAM_GIT_TIMEOUT_SECONDS = 60.0  # one git network command (fetch, push)
TEAM_TICK_SECONDS = 15.0  # how often the scheduler looks for a due team sync
TEAM_PUSH_ROUNDS = 3  # a push that lost a race with another member's is merged and retried this often

# Web view (/ui): `memoryd ui` mints a one-time login link valid this long; the session cookie it
# sets lasts UI_SESSION_SECONDS (sessions live in the daemon's memory: a restart logs the browser out).
UI_LOGIN_CODE_SECONDS = 120.0
UI_SESSION_SECONDS = 12 * 3600.0
# Issue 41: a hand-written memory of 900 KB of `[` took 10-48 s to render and four at once held /v1/health
# for seconds. The web view renders a body block by block; a block over these (16 KB of prose renders in
# ~3 ms; 1,000 `![` delimiters in ~40 ms), and every block once the budget is spent, is shown as escaped text.
MARKDOWN_BLOCK_MAX_CHARS = 16_000
MARKDOWN_BLOCK_MAX_DELIMITERS = 1_000
MARKDOWN_RENDER_BUDGET_SECONDS = 0.1
# issue 52: a page renders this much of a body as Markdown (every body a save takes), then links to the whole text
MARKDOWN_RENDER_MAX_CHARS = MEMORY_BODY_MAX_BYTES
# --- watching memory work (issue 30) ----------------------------------------------------
RECALL_CONTEXT_ITEMS = 100  # POST /v1/recall's `context`: recent paths and commands at most
RECALL_CONTEXT_ITEM_CHARS = 1_000  # one context item (a path or a command) at most
RECALL_LOG_PER_PROJECT = 500  # the recall log keeps each memory dir's last 500 recalls (a ring)
RECALL_LOG_SETTLE_SECONDS = 5.0  # a read of the log waits at most this long for recalls being written
RECALL_LOG_PROMPT_CHARS = 300  # a logged prompt is redacted, then cut to this
RECALL_LOG_LEFT_OUT = 3  # memories logged as "left out just under the cut"
RECALL_LOG_DEFAULT_LIMIT = 50  # GET /v1/recall/log and the live page, when no limit is asked
ACTIVITY_KEPT = 200  # recent events the live page shows when it opens
ACTIVITY_HEARTBEAT_SECONDS = 15.0  # an idle event stream sends a comment this often (proxies, dead peers)
ACTIVITY_SUBSCRIBER_QUEUE = 256  # events a slow live page may lag behind before newer ones are dropped

# Stale-memory checks: recall re-reads a project's git state (HEAD + index) at most this often;
# `memoryd stale` and the web view always read it fresh.
STALE_REPO_RECHECK_SECONDS = 5.0
# A path is stale only when git history had it: the one `git log` that asks may take this long when a
# person asks (`memoryd stale`, the web view, dream), and this long on recall's path (else: no caveat yet).
STALE_HISTORY_TIMEOUT_SECONDS = 20.0
STALE_HISTORY_RECALL_TIMEOUT_SECONDS = 0.25

# `memoryd setup` where no user service manager runs: how long a daemon started in the background gets to answer.
BACKGROUND_START_SECONDS = 30.0
# issue 50: the guard (memoryd/guard/)
FORBID_MAX_ITEMS = 20  # per list of a memory's forbid (commands, writes, reads, imports)
FORBID_ITEM_MAX_CHARS = 200  # one command, glob or module
# Pairs of states the guard explores to tell whether a shell glob argument (`docs/*.md`) could name a protected
# path: a real argument needs a few thousand; 8 KB of `a*a*…` against a 200-character glob needs millions (3 s).
GLOB_OVERLAP_MAX_PAIRS = 50_000
FORBID_INSTEAD_MAX_CHARS = 300  # what to do instead, one line
GUARD_OLD_TEXT_MAX_BYTES = 512 * 1024  # a Write's target read for its imports before the change, at most this much
