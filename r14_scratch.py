import time, sys, hiddenenvs, numpy as np
from agents.rebel import ReBeLSearch, rebel_policy
from hiddenenvs.analysis import GameTree, exploitability
mode=sys.argv[1]; depth=None if sys.argv[2]=='0' else int(sys.argv[2]); it=int(sys.argv[3])
for name, kw in [("gdl_biased_rps",{}),("monty_hall",{}),("liars_dice",{"faces":4})]:
    g = hiddenenvs.load_game(name, **kw)
    t=time.time(); s = ReBeLSearch(g, iterations=it, resolve=mode, max_depth=depth)
    pol = rebel_policy(s)
    tree = GameTree.build(g)
    print(name, mode, depth, "expl", exploitability(tree, pol), "time", round(time.time()-t,2), "solves", len(s._solved), flush=True)
