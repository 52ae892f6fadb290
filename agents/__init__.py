"""Learning and search agents: CFR family, NFSP and its extensions, baselines."""
