"""Writes the manual page portal-auth(1) to stdout from the tool's own help (scripts/install).

    python3 scripts/manpage.py PATH/TO/portal-auth > portal-auth.1

The help comes from `portal-auth --experimental-dump-help` (swift-argument-parser's JSON description of every
command, option and text), so the page says what `portal-auth help <command>` says. One page, a section per
command (subcommands such as `iap login` included). Plain man(7) macros; text is escaped for roff. The header
names the tool's version as `portal-auth --version` prints it, and the date of $SOURCE_DATE_EPOCH when set (a
reproducible page, scripts/package), else today's."""
import json
import os
import re
import subprocess
import sys
import time


def roff(text):
    """Text made safe for roff: backslashes and hyphens escaped, no line starting with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def paragraphs(text):
    """Discussion text as roff paragraphs; indented lines (examples) kept as they are, in no-fill blocks."""
    out = []
    block = []
    literal = False
    for line in text.split("\n"):
        is_literal = line.startswith("  ")
        if not line.strip():
            if block:
                out.append((literal, block))
                block = []
            continue
        if block and is_literal != literal:
            out.append((literal, block))
            block = []
        literal = is_literal
        block.append(line)
    if block:
        out.append((literal, block))
    lines = []
    for literal, block in out:
        if literal:
            lines += [".PP", ".nf", ".RS 4", *[roff(line[2:]) for line in block], ".RE", ".fi"]
        else:
            lines += [".PP", roff(" ".join(line.strip() for line in block))]
    return lines


def option_lines(argument):
    names = argument.get("names") or []
    value = argument.get("valueName")
    if argument["kind"] == "positional":
        label = f"\\fI{roff(value or 'value')}\\fR"
    else:
        spelled = [("--" if name["kind"] == "long" else "-") + name["name"] for name in names]
        label = ", ".join(f"\\fB{roff(name)}\\fR" for name in spelled)
        if argument["kind"] == "option" and value:
            label += f" \\fI{roff(value)}\\fR"
    lines = [".TP", label]
    text = argument.get("abstract", "")
    if argument.get("defaultValue") not in (None, ""):
        text += f" (default: {argument['defaultValue']})"
    lines.append(roff(text) if text else "")
    if argument.get("discussion"):
        lines.append(roff(argument["discussion"]))
    return lines


def command_section(command, path):
    lines = [".SS " + roff(" ".join(path))]
    if command.get("abstract"):
        lines += [".PP", roff(command["abstract"])]
    if command.get("discussion"):
        lines += paragraphs(command["discussion"])
    shown = [argument for argument in command.get("arguments", []) if argument.get("shouldDisplay", True)]
    if shown:
        lines += [".PP", "Options:", ".RS 4"]
        for argument in shown:
            lines += option_lines(argument)
        lines.append(".RE")
    for sub in command.get("subcommands", []):
        if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
            lines += command_section(sub, path + [sub["commandName"]])
    return lines


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    dump = subprocess.run([sys.argv[1], "--experimental-dump-help"], capture_output=True, text=True, check=True).stdout
    root = json.loads(dump)["command"]
    name = root["commandName"]
    version_line = subprocess.run([sys.argv[1], "--version"], capture_output=True, text=True, check=True).stdout
    version = re.match(rf"{re.escape(name)} ([0-9][0-9A-Za-z.+~-]*)", version_line)
    if not version:
        raise SystemExit(f"{sys.argv[1]} --version printed no version: {version_line[:200]!r}")
    date = time.strftime("%Y-%m-%d", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH") or time.time())))
    lines = [f'.TH {name.upper()} 1 "{date}" "{name} {version.group(1)}" "User Commands"', ".SH NAME",
             f"{roff(name)} \\- {roff(root.get('abstract', ''))}", ".SH SYNOPSIS",
             f"\\fB{roff(name)}\\fR \\fIcommand\\fR [\\fIoptions\\fR]", ".SH DESCRIPTION"]
    lines += paragraphs(root.get("discussion", ""))
    shown = [argument for argument in root.get("arguments", []) if argument.get("shouldDisplay", True)]
    if shown:
        lines += [".SH OPTIONS"]
        for argument in shown:
            lines += option_lines(argument)
    lines.append(".SH COMMANDS")
    for sub in root.get("subcommands", []):
        if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
            lines += command_section(sub, [name, sub["commandName"]])
    lines += [".SH SEE ALSO", f"\\fB{roff(name)} help\\fR \\fIcommand\\fR"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
