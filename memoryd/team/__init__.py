"""Team memory through git: `<memory dir>/team/` synced with a remote the team already shares."""

from memoryd.team.report import SyncReport
from memoryd.team.service import TeamService
from memoryd.team.sync import TeamRepo

__all__ = ["SyncReport", "TeamRepo", "TeamService"]
