import sys
print("py-out"); print("py-err", file=sys.stderr); print("py-out2")
