# Reference driver for tests/sysctl/tuned_reference.rs: TuneD's own profile loader
# (tuned.profiles Locator/Loader/Merger, tuned.profiles.variables) and its
# sysctl plugin's apply path (SysctlPlugin._instance_apply_static, which calls
# _apply_system_sysctl with reapply_sysctl), run inside a private mount
# namespace against a fake /proc/sys (a tmpfs the test mounted). In auto mode
# tuned's own ProfileRecommender picks the profile. The daemon's
# choice of profile (active_profile, profile_mode, post_loaded_profile) and the
# unit manager's filtering and priority order are repeated from
# daemon/daemon.py and units/manager.py. Prints what tuned wrote (with the
# file each value came from) and the fake /proc/sys read back.
import os, sys

def proc_sys_fstype():
    fs = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 10 or "-" not in parts:
                continue
            sep = parts.index("-")
            if parts[4] == "/proc/sys":
                fs = parts[sep + 1]
            elif parts[4].startswith("/proc/sys/"):
                fs = "a mount below /proc/sys (%s)" % parts[4]
    return fs

# SAFETY: never write to the real kernel. The last mount on /proc/sys (the
# one path lookups reach) must be the tmpfs the test mounted.
if proc_sys_fstype() != "tmpfs":
    sys.stderr.write("ABORT: /proc/sys is not a tmpfs (%r); refusing to run\n" % proc_sys_fstype())
    sys.exit(3)

import tuned.consts as consts
import tuned.logs
import logging
logging.getLogger("tuned").setLevel(logging.CRITICAL)
from tuned.utils.global_config import GlobalConfig
from tuned.utils.commands import commands
from tuned.profiles.locator import Locator
from tuned.profiles.loader import Loader
from tuned.profiles.merger import Merger
from tuned.profiles.factory import Factory
from tuned.profiles.variables import Variables
from tuned.profiles.exceptions import InvalidProfileException
import tuned.plugins.plugin_sysctl as ps

class Tag(str):
    """A profile value that remembers the file it was read from."""

def tagged(v, origin):
    t = Tag(v)
    t.origin = origin
    return t

class TaggingLoader(Loader):
    def _load_config_data(self, file_name):
        config = super()._load_config_data(file_name)
        for sec in config.values():
            for k, v in list(sec.items()):
                if isinstance(v, str):
                    sec[k] = tagged(v, file_name)
        return config

out = []

def dotted(path):
    """The key `sysctl -a` prints for a file below /proc/sys."""
    rel = os.path.relpath(os.path.normpath(path), "/proc/sys")
    return ".".join(c.replace(".", "/") for c in rel.split("/"))

def esc(v):
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")

state = {"src": None, "origin": {}}

def _exists(option):
    return os.path.exists(ps._get_sysctl_path(option))

orig_write = ps._write_sysctl
def write(option, value, ignore_missing=False):
    # procfs cannot create files; a tmpfs could: refuse as the kernel would
    if not _exists(option):
        return False
    ok = orig_write(option, value, ignore_missing)
    if ok:
        src = state["src"] or ("profile:" + state["origin"].get(option, "?"))
        out.append("WRITE\t%s\t%s\t%s" % (dotted(ps._get_sysctl_path(option)), esc(value), src))
    return ok
ps._write_sysctl = write

orig_line = ps._apply_sysctl_config_line
def line(path, lineno, text, inst):
    state["src"] = "%s:%d" % (path, lineno)
    try:
        orig_line(path, lineno, text, inst)
    finally:
        state["src"] = None
ps._apply_sysctl_config_line = line

class Storage:
    def get(self, k, d=None): return d
    def set(self, k, v): pass
    def unset(self, k): pass

def main():
    cfg = GlobalConfig()
    cmd = commands()
    # the daemon's _get_startup_profile / _init_profile / _load_profiles
    profile, manual = cmd.get_active_profile()
    if manual is None:
        manual = profile is not None
    post = cmd.get_post_loaded_profile()
    if not manual:
        # the daemon's _get_recommended_profile: tuned's own recommender
        # (recommend.conf, recommend.d, virt-what, /etc/system-release-cpe);
        # the test points SYSTEM_RELEASE_FILE at the layout's copy and binds
        # a fake virt-what, so the answer depends on the layout alone
        from tuned.utils.profile_recommender import ProfileRecommender
        if os.environ.get("LAYOUT_SYSTEM_RELEASE"):
            consts.SYSTEM_RELEASE_FILE = os.environ["LAYOUT_SYSTEM_RELEASE"]
        hardcoded = not cfg.get_bool(consts.CFG_RECOMMEND_COMMAND, consts.CFG_DEF_RECOMMEND_COMMAND)
        profile = ProfileRecommender(is_hardcoded=hardcoded).recommend()
        out.append("STATE\trecommended %s" % profile)
    names = (profile or "").split()
    if post:
        names.append(post)
    if manual:
        out.append("STATE\tprofiles %s" % " ".join(names))
    if not names:
        return
    variables = Variables()
    loader = TaggingLoader(Locator(consts.LOAD_DIRECTORIES), Factory(), Merger(), cfg, variables)
    for n in names:
        if n not in loader.profile_locator.get_known_names():
            out.append("LOADFAIL\tRequested profile '%s' doesn't exist." % n)
            return
    try:
        prof = loader.load(names)
    except InvalidProfileException as e:
        out.append("LOADFAIL\t%s" % e)
        return
    # units.manager.create: enabled, cpuinfo/uname match, sorted by priority
    infos = []
    def_prio = int(cfg.get(consts.CFG_DEFAULT_INSTANCE_PRIORITY, consts.CFG_DEF_DEFAULT_INSTANCE_PRIORITY))
    for name, unit in prof.units.items():
        if not unit.enabled:
            continue
        if unit.cpuinfo_regex is not None or unit.uname_regex is not None:
            out.append("HOSTDEP\t%s" % name)
            continue
        unit.options.setdefault("priority", def_prio)
        unit.options["priority"] = int(unit.options["priority"])
        infos.append((name, unit))
    infos.sort(key=lambda x: x[1].options["priority"])
    plugin = ps.SysctlPlugin.__new__(ps.SysctlPlugin)
    plugin._variables = variables
    plugin._cmd = commands()
    plugin._global_cfg = cfg
    plugin._storage = Storage()
    for name, unit in infos:
        unit.options.pop("priority")
        if unit.type != "sysctl":
            continue
        class Instance: pass
        inst = Instance()
        inst.name = name
        inst._sysctl = unit.options
        inst._sysctl_original = {}
        state["origin"] = {k: getattr(v, "origin", "?") for k, v in unit.options.items()}
        plugin._instance_apply_static(inst)

main()
for root, dirs, files in os.walk("/proc/sys"):
    for f in files:
        p = os.path.join(root, f)
        key = dotted(p)
        with open(p) as fh:
            # procfs keeps a string up to its first newline (_proc_do_string)
            v = fh.read().split("\n")[0]
        out.append("FINAL\t%s\t%s" % (key, esc(v)))
print("\n".join(out))
