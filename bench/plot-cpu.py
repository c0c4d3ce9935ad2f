#!/usr/bin/python3
"""Plots CPU against stream count, audiod and PipeWire side by side.

    bench/plot-cpu.py [DATA.tsv [OUT.png]]

Reads a tab-separated file with the columns players, streams,
audiod_server, audiod_per_client, pipewire_server, pipewire_per_client
(lines starting with # are comments; see
bench/results/2026-12-05-cpu-vs-streams.tsv) and writes a PNG with one
panel per kind of player: the total cost (server + every client) and the
server's share alone, for each server. Defaults: the 2026-12-05 data, and
the same name with .png.

Needs Debian's python3-matplotlib (apt-get install python3-matplotlib);
it is a bench tool, not part of the test suite. Runs with /usr/bin/python3
on purpose: a python3 earlier on PATH (pyenv, a venv) may lack it.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "results", "2026-12-05-cpu-vs-streams.tsv")

TITLES = {
    "native": "native players (audioplay / pw-play)",
    "aplay": "aplay through each server's ALSA plugin",
}
SERVERS = [("audiod", "audiod", "tab:blue"), ("pipewire", "PipeWire 0.3.65", "tab:red")]


def read(path):
    rows = {}
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    for row in csv.DictReader(lines, delimiter="\t"):
        rows.setdefault(row["players"], []).append(row)
    for kind in rows:
        rows[kind].sort(key=lambda r: int(r["streams"]))
    return rows


def plot(rows, out):
    kinds = [k for k in TITLES if k in rows] + [k for k in rows if k not in TITLES]
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.5 * len(kinds), 4.6), sharey=True)
    if len(kinds) == 1:
        axes = [axes]
    top = 0.0
    for ax, kind in zip(axes, kinds):
        streams = [int(r["streams"]) for r in rows[kind]]
        for key, label, colour in SERVERS:
            server = [float(r[key + "_server"]) for r in rows[kind]]
            total = [s + n * float(r[key + "_per_client"])
                     for s, n, r in zip(server, streams, rows[kind])]
            top = max(top, max(total))
            ax.plot(streams, total, "o-", color=colour, linewidth=2,
                    label=f"{label}: server + clients")
            ax.plot(streams, server, "s--", color=colour, alpha=0.6,
                    label=f"{label}: server alone")
            for n, t in zip(streams, total):
                ax.annotate(f"{t:.0f} %", (n, t), textcoords="offset points",
                            xytext=(0, 7), ha="center", fontsize=8, color=colour)
        ax.set_title(TITLES.get(kind, kind), fontsize=10)
        ax.set_xlabel("streams")
        ax.set_xticks(streams)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("CPU, % of one core")
    axes[0].set_ylim(0, top * 1.15)
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle("CPU against stream count at quantum 64 (1.33 ms), 48 kHz stereo, null sink",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DATA
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(data)[0] + ".png"
    plot(read(data), out)


if __name__ == "__main__":
    main()
