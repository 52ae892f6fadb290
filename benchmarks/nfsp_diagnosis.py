"""Where an NFSP or ANFSP run's exploitability comes from (:mod:`agents.diagnostics.nfsp`).

python benchmarks/nfsp_diagnosis.py runs/anfsp_leduc
"""

from agents.diagnostics.nfsp import main

if __name__ == "__main__":
    main()
