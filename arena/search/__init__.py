"""Search bots over the game API: single-observer information-set MCTS (`ISMCTS`, `ISMCTSBot`)."""

from arena.search.bot import ISMCTSBot, factory
from arena.search.ismcts import ISMCTS, action_key, rank_rewards

__all__ = ["ISMCTS", "ISMCTSBot", "action_key", "factory", "rank_rewards"]
