"""How much of the exact best-response gain ANFSP's Q reaches when Pi stands still
(:mod:`agents.diagnostics.anfsp_frozen_pi`).

    python benchmarks/anfsp_frozen_pi.py runs/anfsp_leduc --seconds 240
"""

from agents.diagnostics.anfsp_frozen_pi import main

if __name__ == "__main__":
    main()
