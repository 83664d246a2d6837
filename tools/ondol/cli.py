"""Command-line entry point: argument parsing and the four commands."""
import argparse
import sys
from pathlib import Path

from rich.console import Console

from ondol import OndolError, benchmarks, boot, cache, cachetable, netns, project, qemu, report, results
from ondol import bench as bench_runner
from ondol import compare as comparing
from ondol.table import rows_table


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except OndolError as exc:
        print(f"ondol: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ondol: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ondol", description="Build, boot and measure ondol.")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="build and boot ondol on this terminal")
    _boot_options(run)
    run.add_argument("--icount", action="store_true", help="deterministic icount mode")
    run.set_defaults(func=cmd_run)

    net = sub.add_parser("net", help="boot ondol with its network server on a tap in a new "
                         "network namespace, the host's Linux stack as its peer (docs/net.md)")
    net.add_argument("--placement", choices=("mk", "ik"), default="mk",
                     help="the network server as a task (mk) or in the kernel (ik)")
    net.add_argument("--name", default="ondolnet", help="the namespace's name")
    net.add_argument("--relay", metavar="K=V,...",
                     help="frames through build/net/qemurelay, a seeded lossy link: "
                          "seed, loss, dup, reorder (per mille), delay, jitter (ms), "
                          "e.g. seed=7,loss=20,dup=10,reorder=30,delay=2,jitter=3")
    _boot_options(net)
    net.set_defaults(func=cmd_net)

    bench = sub.add_parser("bench", help="run a registered benchmark headless")
    bench.add_argument("name", help="benchmark name (see tools/ondol/benchmarks.py)")
    _boot_options(bench)
    bench.add_argument("--icount", action=argparse.BooleanOptionalAction, default=None,
                       help="icount mode on/off (default: the benchmark's)")
    bench.add_argument("--runs", type=int, default=None, help="boots per configuration "
                       "(--host: repetitions, default 5)")
    bench.add_argument("--host", action="store_true", help="the benchmark's Linux side, run "
                       "natively without QEMU (alloc: docs/alloc.md)")
    bench.add_argument("--timeout", type=float, help="seconds per boot (default: the "
                       "benchmark's)")
    bench.add_argument("--sweep", action="store_true", help="alloc-cache: one run per "
                       "geometry of P2's hardware sweeps, --cache the base preset (default "
                       "pentiumpro), and their figure (docs/alloc.md)")
    bench.add_argument("--qemu", choices=("7.2", "10"), default=None,
                       help="run on the installed QEMU 7.2 or on QEMU 10 (build/qemu, "
                            "unpacked on first use); default: $ONDOL_QEMU or the installed "
                            "one, QEMU 10 for the coherence model's benchmarks under icount")
    bench.add_argument("--order", choices=cache.coherence_orders(), default=None,
                       help="the coherence model's replay order in the model benchmarks "
                            "(coherence, aim, aim-rmap): the plugin's coherence_order= "
                            "(tools/cacheplugin/README.md, \"The coherence model\"); "
                            "default: the plugin's, recorded")
    bench.add_argument("--quick", action="store_true", help="the benchmark's shorter form, "
                       "for CI (sdet: N = 1, 4; unix: a few samples; aim: 1 and 2 CPUs)")
    bench.add_argument("--cpus", type=_int_list, default=(), metavar="N,N,...",
                       help="aim, aim-rmap: only these CPU counts (e.g. 1,16)")
    bench.add_argument("--rmap", type=_word_list, default=(), metavar="MODE,...",
                       help="aim, aim-rmap: only these rmap modes (e.g. lock,log); the "
                            "Linux peer boots with the first")
    bench.set_defaults(func=cmd_bench)

    comp = sub.add_parser("compare", help="ratios B/A of the medians of two result files")
    comp.add_argument("a", type=Path, metavar="A.json")
    comp.add_argument("b", type=Path, metavar="B.json")
    comp.set_defaults(func=cmd_compare)

    ctab = sub.add_parser("cache-table",
                          help="per-domain cache-model figures of a result file, as Markdown")
    ctab.add_argument("file", type=Path, metavar="NAME.json")
    ctab.set_defaults(func=cmd_cache_table)

    rep = sub.add_parser("report", help="write results/report.html")
    _results_option(rep)
    rep.add_argument("--png", action="store_true",
                     help="also save a screenshot of the page, rendered by headless "
                          "Chromium, as report.png")
    rep.set_defaults(func=cmd_report)
    return parser


def _boot_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                        help="kernel option (repeatable)")
    parser.add_argument("--cache", metavar="SPEC",
                        help="load the cache model plugin: a preset and/or key=value pairs")
    parser.add_argument("--no-build", action="store_true", help="do not run make first")
    _results_option(parser)


def _results_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, metavar="DIR",
                        help="results directory (default: results/ in the repository)")


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"CPU counts start at 1: {text!r}")
    return values


def _word_list(text: str) -> tuple[str, ...]:
    return tuple(w for w in text.split(",") if w)


def _parse_opts(items: list[str]) -> dict[str, str]:
    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise OndolError(f"bad --opt {item!r}: expected key=value")
        options[key] = value
    return options


def _prepare(args: argparse.Namespace) -> tuple[Path, Path, str]:
    """Repository root, results directory and QEMU binary; builds unless --no-build."""
    top = project.root()
    directory = args.results or top / "results"
    binary = qemu.find()
    if not args.no_build:
        project.build(top, directory / "logs" / "make.log")
    return top, directory, binary


def cmd_run(args: argparse.Namespace) -> int:
    top, directory, binary = _prepare(args)
    kernel, initrd = project.kernel_images(top)
    directory.mkdir(parents=True, exist_ok=True)
    stream = directory / "run.jsonl"
    plugin = None
    if args.cache:
        plugin = cache.plugin(args.cache, top, directory / "run.cache.jsonl",
                              directory / "run.plugin.log")
    machine = qemu.Machine(kernel=kernel, initrd=initrd, results=stream,
                           options=_parse_opts(args.opt), icount=args.icount, plugin=plugin,
                           interactive=True)
    status = boot.interactive(qemu.command(binary, machine))
    print(f"ondol: result stream in {project.display(stream)}", file=sys.stderr)
    return status


def cmd_net(args: argparse.Namespace) -> int:
    why = netns.unavailable()
    if why:
        raise OndolError(f"net {why}")
    top, directory, binary = _prepare(args)
    kernel, initrd = project.kernel_images(top)
    directory.mkdir(parents=True, exist_ok=True)
    options = {**netns.kernel_options(args.placement), **_parse_opts(args.opt)}
    plugin = None
    if args.cache:
        plugin = cache.plugin(args.cache, top, directory / "net.cache.jsonl",
                              directory / "net.plugin.log")
    extra = netns.relay_qemu_flags() if args.relay else netns.qemu_flags()
    machine = qemu.Machine(kernel=kernel, initrd=initrd, results=directory / "net.jsonl",
                           options=options, icount=False, plugin=plugin, interactive=True,
                           extra=extra)
    with netns.Namespace(args.name) as ns:
        print(f"ondol: namespace {ns.name}: Linux {netns.LINUX_IP}, ondol {netns.ONDOL_IP}; "
              f"host programs: sudo ip netns exec {ns.name} COMMAND "
              f"(try `netcli ping {netns.LINUX_IP}` in ondol)", file=sys.stderr)
        if not args.relay:
            return boot.interactive(ns.prefix() + qemu.command(binary, machine))
        with netns.Relay(ns, top / "build" / "net" / "qemurelay", args.relay) as relay:
            status = boot.interactive(ns.prefix() + qemu.command(binary, machine))
        print(f"ondol: {relay.report}", file=sys.stderr)
        return status


def cmd_bench(args: argparse.Namespace) -> int:
    if args.host:
        return cmd_bench_host(args)
    subset = {"cpus": args.cpus, "modes": args.rmap} if args.cpus or args.rmap else {}
    bench = benchmarks.get(args.name, quick=args.quick, **subset)
    if args.order and not bench.model_qemu:
        raise OndolError(f"--order is for the coherence model's benchmarks, not {bench.name}")
    args.runs = 1 if args.runs is None else args.runs
    if args.runs < 1:
        raise OndolError("--runs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise OndolError("--timeout must be positive")
    options = _parse_opts(args.opt)
    top, directory, binary = _prepare(args)
    icount = bench.icount if args.icount is None else args.icount
    if args.qemu or (bench.model_qemu and icount):
        binary = qemu.for_bench(top, args.qemu, bench.model_qemu, icount)
    request = bench_runner.Request(options=options, icount=args.icount, runs=args.runs,
                                   cache=args.cache, timeout=args.timeout,
                                   results_dir=directory, coherence_order=args.order)
    if args.sweep:
        return cmd_bench_sweep(bench, request, top, binary)
    doc = bench_runner.run(bench, request, top, binary)
    from ondol import plot  # matplotlib takes ~0.4 s to import; only bench needs it
    written = [*results.write(doc, directory), *plot.draw(doc, bench.plot, directory),
               *plot.draw_figures(bench.figure_input(doc, directory), bench.figures,
                                  report.load_papers(), directory),
               *(bench.outputs(doc, directory) if bench.outputs else [])]
    found = results.units(doc["results"])
    columns = list(bench.columns) + ["unit"] * (len(found) > 1)
    caption = f"mode {doc['mode']}" + (f"; values in {found[0]}" if len(found) == 1 else "")
    console = _console()
    console.print(rows_table(f"{bench.name}: {bench.description}", columns,
                               doc["results"], caption))
    per_domain = cachetable.domain_rows(doc["results"], bench.key)
    if per_domain:
        per_ipc = any(r["insns/IPC"] is not None for r in per_domain)
        console.print(rows_table(f"{bench.name}: cache model {doc['cache']} by domain",
                                   cachetable.columns(bench.key, per_ipc), per_domain,
                                   "counts exact for the model; cycles modelled"))
    if "plugin_overhead" in doc:
        o = doc["plugin_overhead"]
        print(f"cache model overhead: {o['ratio']}x wall time ({o['wall_s_with_plugin']} s with "
              f"the plugin, {o['wall_s_without']} s without)", file=sys.stderr)
    print("wrote " + ", ".join(project.display(p) for p in written), file=sys.stderr)
    return 0


def cmd_bench_sweep(bench, request, top: Path, binary: str) -> int:
    """`bench alloc-cache --sweep`: P2's hardware sweeps (allocsweep.py)."""
    from ondol import allocsweep
    if bench.name != "alloc-cache":
        raise OndolError("--sweep is for alloc-cache only")
    written = allocsweep.write(allocsweep.run(bench, request, top, binary),
                               request.results_dir)
    print("wrote " + ", ".join(project.display(p) for p in written), file=sys.stderr)
    return 0


def cmd_bench_host(args: argparse.Namespace) -> int:
    """`bench alloc --host`: the head-to-head on this Linux machine (hostbench.py)."""
    from ondol import hostbench
    if args.name != "alloc":
        raise OndolError(f"no host side for benchmark {args.name!r} (known: alloc)")
    runs = 5 if args.runs is None else args.runs
    if runs < 1:
        raise OndolError("--runs must be at least 1")
    top = project.root()
    directory = args.results or top / "results"
    if not args.no_build:
        project.build(top, directory / "logs" / "make.log")
    doc = hostbench.run(top, runs, directory)
    written = [*results.write(doc, directory), *hostbench.plots(doc, directory)]
    console = _console()
    console.print(rows_table(f"alloc --host: {hostbench.DESCRIPTION}", hostbench.COLUMNS,
                             doc["results"], f"median of {runs} runs, wall clock; "
                             "insns_per_op from callgrind"))
    console.print(rows_table("worst-case small malloc (callgrind, per call)",
                             ("allocator", "calls", "median", "p9999", "max",
                              "max_without_syscalls", "calls_with_syscalls", "unit"),
                             doc["worst_case_malloc"]))
    ratio = doc["median_ratio_vs_mimalloc"]
    if ratio:
        print(f"ondol / mimalloc, median over the workloads: time {ratio['time']:.2f}, "
              f"peak RSS {ratio['peak_rss']:.2f}", file=sys.stderr)
    print("wrote " + ", ".join(project.display(p) for p in written), file=sys.stderr)
    return 0


def _console() -> Console:
    """rich's console; when the output is a file or pipe (logs, CI), wide enough that the
    tables keep their numbers instead of folding them into 80 columns."""
    console = Console()
    return console if console.is_terminal else Console(width=200)


def cmd_compare(args: argparse.Namespace) -> int:
    a, b = results.load(args.a), results.load(args.b)
    columns, rows, warnings = comparing.compare(a, b)
    _console().print(rows_table(f"{args.b} / {args.a}", columns, rows))
    for warning in warnings:
        print(f"ondol: note: {warning}", file=sys.stderr)
    return 0


def cmd_cache_table(args: argparse.Namespace) -> int:
    print(cachetable.markdown(results.load(args.file)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    directory = args.results or project.root() / "results"
    page = report.write(directory)
    written = [page]
    if args.png:
        from ondol import browser
        written.append(browser.screenshot(page, directory / "report.png"))
    print("wrote " + ", ".join(project.display(p) for p in written), file=sys.stderr)
    return 0
