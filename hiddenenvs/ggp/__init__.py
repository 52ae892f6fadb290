"""The general game playing match protocol over HTTP (Genesereth, Love & Pell 2005; the
GDL-II extension of Thielscher 2010 as the Dresden GGP server speaks it).

- :mod:`hiddenenvs.ggp.player`: a player serving the agent its factory makes (the command
  serving this repository's agents by spec: ``python -m agents.ggp_player --port 9147
  --player uct``);
- :mod:`hiddenenvs.ggp.manager`: a game manager running one match between players over
  HTTP with start and play clocks, writing the match record
  (``python -m hiddenenvs.ggp.manager --rules game.kif --players URL URL``);
- :mod:`hiddenenvs.ggp.kif`: the messages as KIF terms; :mod:`hiddenenvs.ggp.rules`: a
  received rule sheet as a game, and KIF moves and percepts as the model's indices.
"""
