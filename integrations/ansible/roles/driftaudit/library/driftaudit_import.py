#!/usr/bin/python
# -*- coding: utf-8 -*-
# driftaudit role: put one host's snapshot archive into the controller's git
# repository as the directory HOST, and commit it when it changed.

DOCUMENTATION = r"""
---
module: driftaudit_import
short_description: Commit a driftaudit snapshot archive into a git repository
description:
  - Unpacks the archive of a C(driftaudit snapshot) directory into a fresh
    directory, replaces the directory I(host) of the repository with it and
    commits that directory alone when it differs from the last commit.
  - A snapshot whose only difference is the capture time in
    C(snapshot.json) (C(captured_at)) is no change: the committed
    C(snapshot.json) is kept, so the repository records when a host last changed.
  - Reports C(changed) only when a commit was made (or, in check mode, would be).
  - Runs on the controller (C(delegate_to: localhost)); one host at a time
    per repository (C(throttle: 1)), since git allows one writer.
options:
  repo:
    description: The git repository (a work tree).
    required: true
    type: path
  host:
    description: Directory name inside the repository (the inventory host).
    required: true
    type: str
  archive:
    description: A gzip tar archive of the snapshot directory's contents.
    required: true
    type: path
  git_name:
    description: Commit author name when the repository's git config has none.
    type: str
    default: driftaudit
  git_email:
    description: Commit author e-mail when the repository's git config has none.
    type: str
    default: driftaudit@localhost
"""

import json
import os
import shutil
import subprocess
import tarfile
import tempfile

from ansible.module_utils.basic import AnsibleModule

VOLATILE = ("captured_at",)


def git(repo, *args, check=True, env=None):
    p = subprocess.run(["git", "-C", repo] + list(args), capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise RuntimeError("git %s: %s" % (" ".join(args), (p.stderr or p.stdout).strip()))
    return p


def safe_extract(archive, dest):
    """Extract files, directories and symbolic links only, never outside dest.

    Symbolic links are kept as they are, absolute ones too: inside a
    snapshot they are read relative to the snapshot root, as on the host
    (docs/snapshot-format.md). No member may lie under a link.
    """
    with tarfile.open(archive, "r:gz") as t:
        members = t.getmembers()
        links = set()
        for m in members:
            name = os.path.normpath(m.name)
            if name in (".", ""):
                continue
            if name.startswith("..") or os.path.isabs(name):
                raise RuntimeError("archive member %r leaves the snapshot" % m.name)
            if not (m.isfile() or m.isdir() or m.issym()):
                raise RuntimeError("archive member %r is not a file, directory or symbolic link" % m.name)
            parts = name.split(os.sep)
            for i in range(1, len(parts)):
                if os.sep.join(parts[:i]) in links:
                    raise RuntimeError("archive member %r lies under a symbolic link" % m.name)
            if m.issym():
                links.add(name)
        if hasattr(tarfile, "tar_filter"):
            t.extractall(dest, members=members, filter="tar")
        else:  # Python without extraction filters: the checks above
            t.extractall(dest, members=members)


def without_volatile(text):
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if isinstance(doc, dict):
        for k in VOLATILE:
            doc.pop(k, None)
    return json.dumps(doc, sort_keys=True)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            repo=dict(type="path", required=True),
            host=dict(type="str", required=True),
            archive=dict(type="path", required=True),
            git_name=dict(type="str", default="driftaudit"),
            git_email=dict(type="str", default="driftaudit@localhost"),
        ),
        supports_check_mode=True,
    )
    repo, host = module.params["repo"], module.params["host"]
    if not host or host.startswith(".") or "/" in host or host in ("..",):
        module.fail_json(msg="host `%s` cannot be a directory name in the repository" % host)
    target = os.path.join(repo, host)
    try:
        top = git(repo, "rev-parse", "--show-toplevel").stdout.strip()
        if os.path.realpath(top) != os.path.realpath(repo):
            raise RuntimeError("`%s` is not the top of its git work tree (`%s` is)" % (repo, top))
        staging = tempfile.mkdtemp(prefix=".driftaudit-" + host + "-", dir=repo)
        try:
            new = os.path.join(staging, "snapshot")
            os.mkdir(new)
            safe_extract(module.params["archive"], new)
            if not os.path.isfile(os.path.join(new, "snapshot.json")):
                raise RuntimeError("the archive holds no snapshot.json: not a driftaudit snapshot")
            has_head = git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode == 0
            old_meta = None
            if has_head:
                p = git(repo, "show", "HEAD:%s/snapshot.json" % host, check=False)
                if p.returncode == 0:
                    old_meta = p.stdout
            with open(os.path.join(new, "snapshot.json")) as f:
                new_meta = f.read()
            if old_meta is not None and without_volatile(old_meta) == without_volatile(new_meta):
                # only the capture time differs: keep the committed one
                with open(os.path.join(new, "snapshot.json"), "w") as f:
                    f.write(old_meta)
            # compare the new tree with the committed one through a private index
            index = os.path.join(staging, "index")
            env = dict(os.environ, GIT_INDEX_FILE=index, GIT_WORK_TREE=new)
            git(repo, "--work-tree", new, "add", "-A", "--", ".", env=env)
            tree = git(repo, "write-tree", env=env).stdout.strip()
            old_tree = git(repo, "rev-parse", "-q", "--verify", "HEAD:%s" % host, check=False).stdout.strip() if has_head else ""
            changed = tree != old_tree or not os.path.isdir(target)
            if changed and not module.check_mode:
                if os.path.lexists(target):
                    shutil.rmtree(target) if os.path.isdir(target) and not os.path.islink(target) else os.unlink(target)
                os.rename(new, target)
                git(repo, "add", "-A", "--", host)
                if tree != old_tree:
                    cfg = git(repo, "config", "user.email", check=False).stdout.strip()
                    ident = [] if cfg else ["-c", "user.name=" + module.params["git_name"], "-c", "user.email=" + module.params["git_email"]]
                    git(repo, *ident, "commit", "-q", "-m", "driftaudit snapshot of %s" % host, "--", host)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except (RuntimeError, OSError, tarfile.TarError) as e:
        module.fail_json(msg="driftaudit_import: %s" % e)
    module.exit_json(changed=changed, path=target, tree=tree)


if __name__ == "__main__":
    main()
