"""The third-party JavaScript a web export runs on, copied into it (no CDN: the page works
offline), with versions and licences recorded in the export's ``THIRD_PARTY.md``.

The packages are fetched by npm, not kept in git: ``src/anuvad/web/package.json`` and its
``package-lock.json`` pin them, and ``make web-runtime`` runs ``npm ci`` into
``src/anuvad/web/node_modules`` (git-ignored; ``ANUVAD_WEB_NODE_MODULES`` names another folder).
onnxruntime-web's WASM build alone is 14 MB and its npm package 139 MB, too much for the
repository (kept under ~50 MB); npm's own cache makes a second ``npm ci`` offline and fast.

Only the files needed at run time are copied: onnxruntime-web's WASM-only ES module
(``ort.wasm.min.mjs``, SIMD with threads when the page is cross-origin isolated) and its WASM
binary, and ``@sctg/sentencepiece-js`` (SentencePiece's C++ compiled to WASM: it encodes as
Python's ``sentencepiece`` does, 200/200 NTREX-128 dev sentences identical). The latter's two
Node-only imports (``fs``, ``buffer``, used only by loaders the runtime does not call) are
replaced by stubs so that it loads in a browser; nothing else is changed.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from anuvad.errors import CheckpointError

NODE_MODULES_ENV = "ANUVAD_WEB_NODE_MODULES"
WEB_DIR = Path(__file__).resolve().parent

MIT_ONNXRUNTIME = """MIT License

Copyright (c) Microsoft Corporation

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

_SPM_IMPORTS = (
    "import * as fs from 'fs';\nimport { Buffer as Buffer$1 } from 'buffer';\n",
    "// anuvad: the Node-only imports replaced by stubs (see THIRD_PARTY.md)\n"
    "const fs = {};\nconst Buffer$1 = globalThis.Buffer;\n",
)


@dataclass(frozen=True)
class VendoredPackage:
    """One npm package and the files of it an export carries."""

    name: str  # npm name
    folder: str  # under vendor/ in the export
    files: tuple[str, ...]  # paths inside the package
    licence_file: str  # the package's licence text ("" when the package ships none)
    licence_text: str = ""  # used when licence_file is ""


PACKAGES = (
    VendoredPackage(
        "onnxruntime-web",
        "onnxruntime-web",
        (
            "dist/ort.wasm.min.mjs",
            "dist/ort-wasm-simd-threaded.mjs",
            "dist/ort-wasm-simd-threaded.wasm",
        ),
        "",
        MIT_ONNXRUNTIME,
    ),
    VendoredPackage("@sctg/sentencepiece-js", "sentencepiece-js", ("dist/index.js",), "LICENSE"),
)


def node_modules() -> Path:
    """The folder npm installed the runtime's packages into.

    Raises:
        CheckpointError: it is missing (with the command that fills it).
    """
    folder = Path(os.environ.get(NODE_MODULES_ENV) or WEB_DIR / "node_modules")
    missing = [p.name for p in PACKAGES if not (folder / p.name / "package.json").is_file()]
    if missing:
        raise CheckpointError(
            f"the web runtime's npm packages ({', '.join(missing)}) are not in {folder}; run "
            f"`make web-runtime` (npm ci in {WEB_DIR}) or set {NODE_MODULES_ENV}"
        )
    return folder


def vendor_runtime(out: Path, modules: Path) -> list[dict[str, str]]:
    """Copy every package's run-time files into ``out/vendor/`` and its licence into
    ``out/LICENSES/``; write ``out/THIRD_PARTY.md``.

    Returns:
        Per package: name, version, licence, folder.
    """
    recorded: list[dict[str, str]] = []
    (out / "LICENSES").mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        source = modules / package.name
        meta = json.loads((source / "package.json").read_text(encoding="utf-8"))
        target = out / "vendor" / package.folder
        target.mkdir(parents=True, exist_ok=True)
        for name in package.files:
            shutil.copyfile(source / name, target / Path(name).name)
        if package.name == "@sctg/sentencepiece-js":
            script = target / "index.js"
            text = script.read_text(encoding="utf-8")
            if not text.startswith(_SPM_IMPORTS[0]):
                raise CheckpointError(
                    f"{source}/dist/index.js does not start with the imports anuvad replaces; "
                    "check the version pinned in src/anuvad/web/package.json"
                )
            script.write_text(_SPM_IMPORTS[1] + text[len(_SPM_IMPORTS[0]) :], encoding="utf-8")
        licence = (
            (source / package.licence_file).read_text(encoding="utf-8")
            if package.licence_file
            else package.licence_text
        )
        (out / "LICENSES" / f"{package.folder}.txt").write_text(licence, encoding="utf-8")
        recorded.append(
            {
                "name": package.name,
                "version": str(meta["version"]),
                "license": str(meta.get("license", "")),
                "folder": f"vendor/{package.folder}",
            }
        )
    lines = [
        "# Third-party files in this folder",
        "",
        "| package | version | licence | files | licence text |",
        "|---|---|---|---|---|",
    ]
    for entry, package in zip(recorded, PACKAGES, strict=True):
        files = ", ".join(Path(f).name for f in package.files)
        lines.append(
            f"| {entry['name']} (npm) | {entry['version']} | {entry['license']} | "
            f"{entry['folder']}/: {files} | LICENSES/{package.folder}.txt |"
        )
    lines += [
        "",
        "onnxruntime-web's npm package ships no licence file; LICENSES/onnxruntime-web.txt is "
        "the MIT licence of github.com/microsoft/onnxruntime, which its package.json names.",
        "onnxruntime-web's `ort-wasm-simd-threaded.wasm` is stored gzip-compressed "
        "(`.wasm.gz`, unchanged inside); `anuvad.js` unpacks it and hands it to onnxruntime-web.",
        "sentencepiece-js/index.js: its two Node-only imports (`fs`, `buffer`) are replaced by "
        "stubs so that it loads in a browser; nothing else is changed. It is stored "
        "gzip-compressed too (`index.js.gz`); `anuvad.js` unpacks it and imports it.",
        "",
    ]
    (out / "THIRD_PARTY.md").write_text("\n".join(lines), encoding="utf-8")
    return recorded


__all__ = ["NODE_MODULES_ENV", "PACKAGES", "node_modules", "vendor_runtime"]
