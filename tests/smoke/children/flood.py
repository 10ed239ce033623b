"""A smoke child that records one stage, then floods stderr forever (issue 13: 4.3 GB in 10 s
went to the temp folder). argv: REQUEST RESULT."""
import json
import sys

json.dump({"stage": "scaled_mm", "done": False, "device": "cpu"}, open(sys.argv[2], "w"))
line = "W flood " * 8192
while True:
    sys.stderr.write(line)
