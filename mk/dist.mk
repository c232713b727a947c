# mk/dist.mk -- `make dist`: $(BUILD)/sqlite-dynamodb-VERSION.tar.gz, the
# source tarball: every file git tracks (as it is in the work tree, edits
# included), under the folder sqlite-dynamodb-VERSION/, owned by root, in
# name order, dated by the last commit (the same tree gives the same
# bytes).  Unpacked anywhere, `make` builds it with the packages of the
# README's Requirements and no git (tests/suites/70-packages.sh does).

DIST_NAME := sqlite-dynamodb-$(DYN_VERSION)
DIST_FILE := $(BUILD)/$(DIST_NAME).tar.gz

.PHONY: dist
dist:
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || \
	  { echo "make dist: not a git checkout: the tarball lists the files" \
	    "git tracks" >&2; exit 1; }
	@mkdir -p $(BUILD)
	git ls-files -z | tar --null --files-from=- --sort=name \
	    --owner=0 --group=0 --numeric-owner \
	    --mtime=@$$(git log -1 --format=%ct) \
	    --transform='s|^|$(DIST_NAME)/|' -cf - | gzip -9n > $(DIST_FILE)
	@echo "dist: $(DIST_FILE)"
