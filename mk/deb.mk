# mk/deb.mk -- `make deb`: $(BUILD)/sqlite-dynamodb_VERSION_ARCH.deb, built
# with dpkg-deb alone (tools/deb.sh; no debhelper, nothing fetched).
#
# A build of its own in $(BUILD)/deb/build, with Debian's compiler and
# linker flags (dpkg-buildflags: hardening, relro) where dpkg-dev is
# installed, installed into $(BUILD)/deb/root with Debian's paths, then
# packed.  What the package installs (docs/packages.md):
#
#   /usr/lib/MULTIARCH/dynamodb.so            the extension: `.load dynamodb`
#                                             (dlopen searches this folder,
#                                             as for Debian's mod_spatialite)
#   /usr/lib/MULTIARCH/libdyndb.so.VERSION    the C library, its SONAME link
#   /usr/lib/MULTIARCH/libdyndb.so.MAJOR      libdyndb.so.MAJOR and the
#   /usr/lib/MULTIARCH/libdyndb.so            link for -ldyndb
#   /usr/lib/MULTIARCH/libdyndb.a             static, dyn_* only
#   /usr/lib/MULTIARCH/pkgconfig/dyndb.pc     no rpath (a system folder)
#   /usr/include/dyndb.h
#   /usr/share/doc/sqlite-dynamodb/           copyright, changelog.gz,
#                                             README.md, docs/
#
# One package, not Debian's split (libdyndbMAJOR, libdyndb-dev, the
# module): one file to install is what the users of an extension expect,
# and lintian's tags about the split are overridden with that reason
# (usr/share/lintian/overrides/sqlite-dynamodb).

DEB_ARCH      := $(shell dpkg --print-architecture 2>/dev/null)
DEB_MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null \
                   || $(CC) -print-multiarch)
DEB_DIR       := $(BUILD)/deb
DEB_FILE      := $(BUILD)/sqlite-dynamodb_$(DYN_VERSION)_$(DEB_ARCH).deb
DEB_LIBDIR    := /usr/lib/$(DEB_MULTIARCH)
# Debian's flags (empty without dpkg-buildflags: the Makefile's own)
DEB_FLAGS     = $(if $(shell command -v dpkg-buildflags),\
                  "CFLAGS=$$(dpkg-buildflags --get CFLAGS) $$(dpkg-buildflags --get CPPFLAGS)" \
                  "LDFLAGS=$$(dpkg-buildflags --get LDFLAGS)")

.PHONY: deb
deb:
	@command -v dpkg-deb >/dev/null || \
	  { echo "make deb: dpkg-deb not found (Debian's dpkg)" >&2; exit 1; }
	rm -rf $(DEB_DIR)/root $(DEB_FILE)
	$(MAKE) --no-print-directory install BUILD=$(DEB_DIR)/build SANITIZE= \
	    $(DEB_FLAGS) DESTDIR=$(abspath $(DEB_DIR)/root) PREFIX=/usr \
	    LIBDIR=$(DEB_LIBDIR) EXTDIR=$(DEB_LIBDIR) DYN_RPATH=
	install -d $(DEB_DIR)/root/usr/share/lintian/overrides
	install -m 644 tools/deb.lintian-overrides \
	    $(DEB_DIR)/root/usr/share/lintian/overrides/sqlite-dynamodb
	DEB_MULTIARCH=$(DEB_MULTIARCH) tools/deb.sh $(DEB_DIR)/root \
	    $(DYN_VERSION) $(DEB_ARCH) $(DEB_FILE)
