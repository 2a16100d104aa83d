"""The set-up page, in English and in Chinese, covers every learner and agrees.

``book/how-to-run.md`` and its Chinese version ``book/how-to-run-zh.md``
(设置与运行) sit side by side in the table of contents; each has a section for
Colab, Linux, macOS, Windows, a firewall (the offline bundle), mainland China
and Binder; and both give the same commands, URLs and mirrors, so that a fix
made to one and not the other fails here. (The install cell itself is shown
on the English page only, where ``tools/repository.py`` keeps it in step.)
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
EN = ROOT / "book" / "how-to-run.md"
ZH = ROOT / "book" / "how-to-run-zh.md"
KINDS = ("colab", "linux", "macos", "windows", "offline", "china", "binder", "authors")
MIRRORS = (
    "https://pypi.tuna.tsinghua.edu.cn/simple",
    "https://mirrors.aliyun.com/pypi/simple/",
    "https://mirrors.ustc.edu.cn/pypi/simple",
    "https://mirror.sjtu.edu.cn/pytorch-wheels/cpu/",
    "https://mirrors.aliyun.com/pytorch-wheels/cpu/",
)
CJK = re.compile(r"[\u4e00-\u9fff]")


def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def code_blocks(page: Path) -> list[str]:
    """The shell commands of a page (not the install cell), comments dropped."""
    blocks = re.findall(r"```(bash|powershell|text)\n(.*?)```", text(page), re.S)
    lines = []
    for _, block in blocks:
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def inline_code(page: Path) -> set[str]:
    """Every inline code span outside comments (``% ...`` lines)."""
    body = "\n".join(ln for ln in text(page).splitlines() if not ln.startswith("%"))
    body = re.sub(r"```.*?```", "", body, flags=re.S)
    body = re.sub(r"\{[\w:-]+\}`[^`]*`", "", body)  # roles: {ref}`...`, {doc}`...`
    return set(re.findall(r"`([^`\n]+)`", body))


def test_both_pages_are_in_the_toc_side_by_side() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part.get("chapters", [])]
    i = files.index("book/how-to-run")
    assert files[i + 1] == "book/how-to-run-zh"
    assert text(ZH).startswith("# 设置与运行\n")


def test_every_kind_of_learner_has_a_section() -> None:
    for kind in KINDS:
        assert f"(run-{kind})=\n## " in text(EN) or f"(run-{kind})=\n### " in text(EN)
        assert f"(zh-run-{kind})=\n#" in text(ZH), kind


def test_the_pages_give_the_same_commands() -> None:
    # the same commands, in each page's order (the Chinese page starts with China)
    assert sorted(code_blocks(EN)) == sorted(code_blocks(ZH))


def test_the_pages_give_the_same_inline_commands_and_urls() -> None:
    en, zh = inline_code(EN), inline_code(ZH)
    assert en - zh == set() and zh - en == set(), (sorted(en - zh), sorted(zh - en))
    for url in MIRRORS:
        assert url in text(EN) and url in text(ZH), url


def test_the_chinese_page_is_in_chinese() -> None:
    prose = re.sub(r"```.*?```|`[^`]*`|\(http[^)]*\)", "", text(ZH), flags=re.S)
    assert len(CJK.findall(prose)) > 2000
    assert "{doc}`How to run the notebooks </book/how-to-run>`" in text(ZH)
    assert "</book/how-to-run-zh>" in text(EN)


def test_windows_commands_use_the_environment_s_scripts() -> None:
    powershell = re.findall(r"```powershell\n(.*?)```", text(EN), re.S)
    assert powershell and all(".venv/bin" not in b for b in powershell)
    assert all(
        ln.startswith((".venv\\Scripts\\", "py "))
        for ln in code_blocks(EN)
        if "\\Scripts\\" in ln
    )
