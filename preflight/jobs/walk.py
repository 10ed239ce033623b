"""Walking a job's paths: the files given, a folder's files, what each file names, in the order
the frameworks merge them; then the one job among them (:mod:`.graph`), its facts, and what was
not read (:mod:`.unread`). The steps of :func:`preflight.jobs.read.read_paths`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from preflight.facts import Unknown
from preflight.jobs import unread, walklinks
from preflight.jobs.formats import SCRIPT_EXT, split_entry
from preflight.jobs.graph import FileRead, config_unread, one_job
from preflight.jobs.scan import SCAN_MAX_BYTES, SCAN_MAX_FILES, scan
from preflight.reading import shellargs, shellcalls, shellempty
from preflight.reading.launchmerge import merged
from preflight.reading.types import ConfigProblem, ConfigRead, ReaderOutput

Todo = tuple[str, str | None, str]          # (path, kind, origin)
UNRECOGNISED = "config.unrecognised"


class Walk:
    """The state of one read: what is still to read, what was read, and why files were not."""

    def __init__(self, kind: str | None) -> None:
        self.kind = kind
        self.problems: list[ConfigProblem] = []
        self.todo: list[Todo] = []
        self.seen: set[str] = set()
        self.inherited: dict[str, dict[str, str]] = {}     # sourced file -> variables
        self.argvs: dict[str, tuple[str, ...]] = {}         # script -> its launch arguments
        # script -> (the first command running it with words, its script, the read it was in)
        self.callers: dict[str, tuple[str, str, int]] = {}
        self.reads = 0
        self.environs: dict[str, dict[str, tuple[str, str]]] = {}   # and its environment
        self.syspaths: dict[str, str] = {}       # a module run with -m -> its sys.path[0]
        self.redone: set[str] = set()
        self.reargv: set[str] = set()
        # real path -> (the argv it was read with, the problems that read gave), to read again
        # when a launch line brings the argv it was not read with (_rerun)
        self.read_with: dict[str, tuple[tuple[str, ...] | None, list[ConfigProblem]]] = {}
        self.roots: list[str] = []                           # job roots, for named files
        self.scanned_other = 0
        self.entries: dict[str, str] = {}                    # FILE.py::NAME -> NAME
        self.not_read: dict[str, str] = {}                   # folder file -> why not read
        self.named: set[str] = set()       # real paths read because a path or a file named them
        self.overriding: set[str] = set()
        self.read: list[FileRead] = []
        self.given: set[str] = set()
        self.known: list[str] = []
        self.owners: dict[str, tuple[str, str, str]] = {}    # own-kind config -> who names it

    def add(self, paths: Sequence[str]) -> None:
        """The paths given: files, ``FILE.py::NAME``, folders (scanned)."""
        later: list[Todo] = []                               # a folder's Python scripts
        for path in paths:
            path = os.fspath(path)
            base, entry = split_entry(path)
            if entry is not None and os.path.lexists(base):
                path = base
                self.entries[os.path.realpath(base)] = entry
            if os.path.isdir(path):
                later.extend(self._folder(path))
            elif os.path.lexists(path):
                self.roots.append(os.path.dirname(os.path.abspath(path)))
                self.todo.append((path, self.kind, "given"))
            else:
                self.problems.append(ConfigProblem(path, None, "no such file or folder"))
        self.todo.extend(later)        # after the files launch lines name, which bring argv
        self.given = {os.path.realpath(p) for p, _, origin in self.todo if origin == "given"}
        self.known = [p for p, _, _ in self.todo]
        self.roots = list(dict.fromkeys(self.roots))

    def _folder(self, path: str) -> list[Todo]:
        self.roots.append(path)
        scripts: list[str] = []
        scanned, total, other = scan(path, self.problems, scripts)
        self.scanned_other += other
        if len(scanned) >= SCAN_MAX_FILES or total > SCAN_MAX_BYTES:
            # A repository or a data folder, not one job: reading it all could take minutes.
            more = "+" if len(scanned) >= SCAN_MAX_FILES else ""
            self.problems.append(ConfigProblem(path, None, (
                f"the folder holds {len(scanned)}{more} config-like files ({total:,} bytes); "
                "that is not one job's configs. Name the job's files (or a folder with just "
                "them)")))
            return []
        written = walklinks.written([p for p in scanned if p.lower().endswith(walklinks.SHELL_EXT)])
        made = {p: why for p in [*scanned, *scripts]
                if (why := written.get(os.path.abspath(p))) is not None}
        self.not_read.update(made)
        self.todo.extend((p, self.kind, "folder") for p in scanned if p not in made)
        take, skip = unread.python_candidates(scripts)
        self.not_read.update(dict.fromkeys(skip, unread.CODE))
        return [(p, self.kind, "folder") for p in take if p not in made]

    def run(self) -> None:
        """Read every file, what it names first (before the rest of a folder)."""
        from preflight.jobs.read import read_file

        while self.todo:
            path, want, origin = self.todo.pop(0)
            real = os.path.realpath(path)
            if real in self.seen and not (origin == "sourced" and real in self.inherited and
                                          real not in self.redone):
                continue
            kept: list[FileRead] = []
            if real in self.seen:
                # read before the script that sources it: read again with that script's variables
                self.redone.add(real)
                kept = [f for f in self.read if os.path.realpath(f.path) == real]
                self._drop(real)
            self.seen.add(real)
            if origin != "folder":      # named by the user or a job file: never "not read"
                self.named.add(real)
            got, out = read_file(path, want or None, explicit=origin not in ("folder", "sourced"),
                                 inherited=self.inherited.get(real), argv=self.argvs.get(real),
                                 entry=self.entries.get(real), environ=self.environs.get(real),
                                 syspath=self.syspaths.get(real))
            self.problems.extend(out.problems)
            self.read_with[real] = (self.argvs.get(real), list(out.problems))
            if origin == "linked" and not out.facts:    # a config not read (config_unread)
                self.read = config_unread(self.read, self.owners.get(real), out.problems)
            if kept and (got is None or not (out.facts or out.linked)):
                self.read.extend(kept)   # read again as the sourcing script's kind: nothing
                continue                 # there, so what the first read found stands
            if got is None and origin == "folder" and not out.problems:
                self.not_read[path] = unread.CODE if path.lower().endswith(SCRIPT_EXT) else \
                    unread.UNRECOGNISED if self.kind is None else unread.other_kind(self.kind)
            if got is None or (not out.facts and not out.linked and out.problems):
                continue        # (a launch script's warnings keep the scripts it runs read)
            self._keep(path, real, got, out, origin)

    def _drop(self, real: str) -> None:
        """Take back what was read from the file at real path ``real``."""
        self.read = [f for f in self.read if os.path.realpath(f.path) != real]

    def _keep(self, path: str, real: str, kind: str, out: ReaderOutput, origin: str) -> None:
        out = walklinks.resolve_links(path, kind, out, self.known, self.roots, self.problems)
        self.reads += 1
        self.read.append(FileRead(path, kind, out, "given" if real in self.given else origin))
        self.overriding.update(os.path.realpath(link.path) for link in out.linked
                               if link.overrides)
        config = {os.path.realpath(link.path) for link in out.linked if not link.after}
        self.owners.update((os.path.realpath(k.path), (real, kind, k.source)) for k in out.linked
                           if k.kind == kind and not (k.after or k.optional or k.included))
        for link in out.linked:
            if link.included:
                # a module the script imports, read with it (jobs/pyimports.py): not again
                # alone, where what the script passes it is not known
                inside = os.path.realpath(link.path)
                self.seen.add(inside)
                self.named.add(inside)
                self._drop(inside)
                continue
            if link.after and (after := os.path.realpath(link.path)) not in self.given | config:
                # evaluation / export after training: of the job (a folder scan leaves it out,
                # or takes back what it read of it), not its config (its Accelerator(
                # mixed_precision="bf16") is not the training's); one the user named is kept
                self.seen.add(after)
                self._drop(after)
                self.not_read[link.path] = unread.AFTER
        self._rerun(out)
        self.todo[:0] = [(link.path, link.kind, "sourced" if link.optional else "linked")
                         for link in out.linked if not link.after and not link.included]
        for link in out.linked:
            if link.variables:
                self._inherit(os.path.realpath(link.path), dict(link.variables), link.source,
                              real)
        self.argvs.update((os.path.realpath(link.path), link.argv)
                          for link in out.linked if link.argv is not None)
        self.syspaths.update((os.path.realpath(link.path), link.syspath)
                             for link in out.linked if link.syspath is not None)
        for link in out.linked:
            if link.environ is not None:    # two launch scripts: what they give alike
                real = os.path.realpath(link.path)
                self.environs[real] = merged(self.environs.get(real), link.environ, link.source)
        self.entries.update((os.path.realpath(link.path), link.entry)
                            for link in out.linked if link.entry is not None)

    def _rerun(self, out: ReaderOutput) -> None:
        """A script read without arguments (the user named it before the launch script that
        runs it: read "by hand", argparse defaults) that a launch line now runs with its argv:
        taken back and read again with them when the link is read (as :meth:`_inherit` does for
        a sourced script's variables), so the order of the user's paths does not change the
        answer (``check train.py run.sh`` lost run.sh's ``--no_fp8``). Once per file: a cycle
        of launch lines cannot read it forever."""
        for link in out.linked:
            real = os.path.realpath(link.path)
            if link.argv is None or link.after or link.included or real in self.reargv or \
                    real not in self.read_with or self.read_with[real][0] is not None:
                continue
            self.reargv.add(real)
            self.seen.discard(real)
            self._drop(real)
            first = {id(p) for p in self.read_with.pop(real)[1]}
            self.problems = [p for p in self.problems if id(p) not in first]

    def _inherit(self, real: str, given: dict[str, str], source: str, by: str) -> None:
        """What a script is run or sourced with (``by``: the real path of the script that runs
        it); run again with other arguments (``bash s.sh a``, then ``bash s.sh b``): each set is
        read apart (reading/shellargs.py), and one read already is read again so. What a
        caller read again gives replaces what it gave before (read alone first, a folder's
        script passes on its own "$@" unknown)."""
        old = self.inherited.get(real)
        first = self.callers.get(real)
        if old is not None and shellargs.ARGV in given and not (
                first is not None and first[1] == by and first[2] != self.reads):
            args = shellargs.plain(shellargs.differing(shellargs.with_env(old), shellargs.with_env(
                given) or "", first[0] if first else "", str(source)))   # (its environment too)
            given[shellargs.ARGV] = args
            if args != old.get(shellargs.ARGV) and real in self.seen and real not in self.redone:
                self.redone.add(real)
                self.seen.discard(real)
                self._drop(real)
                self.todo.insert(0, (real, None, "linked"))
        elif shellargs.ARGV in given:
            self.callers[real] = (str(source), by, self.reads)
        self.inherited[real] = given

    def result(self, paths: Sequence[str]) -> ConfigRead:
        """The one job's facts (earlier files win a name, except files that replace their
        parent's values: --yaml-cfg, a script a launch line runs), files and problems."""
        from preflight.frameworks import FRAMEWORKS, KINDS
        from preflight.reading import boolflags

        # run by hand (jobs/scriptargs.py): a script the user named that no job script runs
        self.problems = [p for p in self.problems if p.code != "runtime_args" or (
            os.path.realpath(p.path) in self.given and
            os.path.realpath(p.path) not in self.callers and
            shellcalls.CALLER not in self.inherited.get(os.path.realpath(p.path), {}))]
        self.problems = shellempty.once(self.problems)     # one note per variable and file
        before = len(self.problems)
        kept = one_job(self.read, self.problems)
        named = " ".join(p.message for p in self.problems[before:])   # the ambiguous ones
        for f in self.read:
            if f not in kept and f.origin == "folder" and os.path.basename(f.path) not in named:
                self.not_read[f.path] = unread.LEFTOVER
        self.not_read = {p: c for p, c in self.not_read.items()
                         if os.path.realpath(p) not in self.named}
        if kept and (leftover := unread.problem(self.not_read, self.roots)) is not None:
            self.problems.append(leftover)
        facts: dict[str, Any] = {}
        prov: dict[str, str] = {}
        replacing: set[str] = set()
        # `--bf16 1`, `merge_lora: yes`: the framework's parser's bools; a YAML's 'false' as the
        # parser the job's code names (TrlParser / HfArgumentParser) loads it
        boolean = _booleans({n.split(".", 2)[1]: v for f in kept for n, v in f.out.facts.items()
                             if n.endswith(".code.parser") and n.count(".") == 3})
        for f in sorted(kept, key=lambda f: os.path.realpath(f.path) not in self.overriding):
            over = os.path.realpath(f.path) in self.overriding
            for name, value in f.out.facts.items():
                value = boolean(name, value, f.out.provenance.get(name, f.path))
                if name not in facts:
                    facts[name] = value
                    prov[name] = f.out.provenance.get(name, f.path)
                    if over:
                        replacing.add(name)
                elif name in replacing and not over and value != facts[name]:
                    # what the launcher or parent file said before the script's code (or a
                    # --yaml-cfg) replaced it: `accelerate launch --mixed_precision fp8` under
                    # Accelerator(mixed_precision="bf16") is FP8 asked for and silently dropped
                    _, kind, rest = name.split(".", 2)
                    alt = f"config.{kind}.replaced.{rest}"
                    if alt not in facts:
                        facts[alt] = value
                        prov[alt] = f.out.provenance.get(name, f.path)
        boolflags.tables(facts, prov, {fw.kind: (frozenset(fw.bool_keys), fw.bool_on_off)
                                       for fw in FRAMEWORKS if fw.bool_keys})
        for f in kept:
            cut = next((p for p in f.out.problems if p.cut), None)
            name = f"config.{f.kind}.unread_args"
            if cut is not None and f.kind and name not in facts:
                # a reader stopped at a bound: what follows wins and was not read (redteam3:
                # FP8 after 10,000 overrides came out "no")
                facts[name] = Unknown(f"{os.path.basename(f.path)}:{cut.line}: {cut.message}")
                prov[name] = f"{f.path}:{cut.line}" if cut.line else f.path
        unrecognised = [p for f in kept for p in f.out.facts.get(UNRECOGNISED, ())]
        if unrecognised:
            facts[UNRECOGNISED] = unrecognised
        files = [(f.path, f.kind) for f in kept]
        if files:
            facts["config.files"] = [{"path": p, "kind": k} for p, k in files]
            # A launch script can hold two kinds (accelerate flags, then HF Trainer arguments).
            # a kind whose facts another framework's reader states as its arguments (slime's
            # flags are Megatron's: `config.megatron.args_of`) is not a kind read
            facts["config.kinds"] = sorted({k for _, k in files} | {
                n.split(".", 2)[1] for n in facts if n.count(".") >= 2 and
                n.split(".", 2)[1] in KINDS and f"config.{n.split('.', 2)[1]}.args_of" not in facts})
            prov["config.files"] = prov["config.kinds"] = "config"
        elif paths and not any(p.level == "error" for p in self.problems):
            self.problems.append(walklinks.nothing_read(paths, self.known, self.scanned_other))
        return ConfigRead(facts, prov, self.problems, files)


def _booleans(parsers: dict[str, Any]) -> Callable[[str, Any, str], Any]:
    """``(name, value, where) -> value``, with each framework's boolean keys as its parser
    reads them on a command line and strings of a config file or Python code as its loader
    takes them (:mod:`preflight.reading.boolflags`)."""
    from preflight.frameworks import BY_KIND, FRAMEWORKS
    from preflight.reading.boolflags import as_bool, from_file, key_of, source_kind

    table = {fw.kind: (frozenset(fw.bool_keys), fw.bool_on_off)
             for fw in FRAMEWORKS if fw.bool_keys}
    numbers = {fw.kind: frozenset(k for _, keys in fw.shape_keys for k in keys)
               for fw in FRAMEWORKS}

    def boolean(name: str, value: Any, where: str) -> Any:
        found = key_of(name, table)
        parts = name.split(".", 2)
        if isinstance(value, str) and len(parts) == 3 and parts[0] == "config" and \
                parts[1] in BY_KIND:
            fw, src = BY_KIND[parts[1]], source_kind(where)
            how = dict(fw.file_strings_by_parser).get(str(parsers.get(parts[1])),
                                                      fw.file_strings) \
                if src == "file" else fw.python_strings if src == "python" else fw.cli_strings
            if found is not None and fw.bool_strings:
                how = fw.bool_strings          # its boolean keys apart (Framework.bool_strings)
            if src == "file" or how:
                key = parts[2].removeprefix("replaced.")
                return from_file(value, how, key=key, on_off=bool(found), boolean=found is not None,
                                 number=key in numbers[parts[1]], why=fw.file_strings_why,
                                 where=str(where))
        return value if found is None else as_bool(value, on_off=found)
    return boolean
