"""sheetgen's row writer writes what openpyxl's own writer writes (issue 14), with
text in a shared-string table as Excel stores it (issue 24.9).

Compared part by part after XML canonicalisation (C14N: attribute order, quoting
and empty-element spelling normalised), so any difference in a cell's
reference, style, type, value, formula or row attribute fails.  openpyxl 3.1
writes text inline; before comparing, each of our ``t="s"`` cells is replaced by
the inline string its index names in our ``xl/sharedStrings.xml`` (and the
table's content type and relationship set aside), so the text of every cell is
compared too, and the table itself is checked: every entry used, none twice,
the counts right.
"""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import openpyxl
import pytest

from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import xlsx_writer
from sheetgen.workbook.builder import build

GENERATED = dt.datetime(2026, 1, 2, 3, 4, 5)


NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SST = "xl/sharedStrings.xml"
SST_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
SST_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings"


def string_table(path: Path) -> tuple[list[str], int]:
    """The shared strings of ``path`` in index order, and the count it declares."""
    with zipfile.ZipFile(path) as z:
        root = ET.fromstring(z.read(SST))
    texts = ["".join(t.text or "" for t in si.iter(f"{{{NS}}}t")) for si in root]
    assert int(root.get("uniqueCount")) == len(texts)
    return texts, int(root.get("count"))


def _inline(xml: str, strings: list[str] | None) -> str:
    """A worksheet with every shared-string cell written as an inline string (as
    openpyxl does) and every empty inline string as an empty cell."""
    ET.register_namespace("", NS)
    root = ET.fromstring(xml)
    for c in root.iter(f"{{{NS}}}c"):
        if c.get("t") == "inlineStr" and not len(c):
            del c.attrib["t"]  # "" is an empty cell to every reader
        elif c.get("t") == "s":
            assert strings is not None, "a shared-string cell in openpyxl's own save"
            v = c.find(f"{{{NS}}}v")
            c.remove(v)
            c.set("t", "inlineStr")
            t = ET.SubElement(ET.SubElement(c, f"{{{NS}}}is"), f"{{{NS}}}t")
            t.text = strings[int(v.text)]
            if t.text.strip() != t.text:
                t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return ET.tostring(root, encoding="unicode")


def _without(xml: str, attrs: dict[str, str]) -> str:
    """``xml`` less its one child element with these attributes (which must be there)."""
    root = ET.fromstring(xml)
    ET.register_namespace("", root.tag[1:].split("}")[0])  # written without a prefix
    found = [e for e in root if all(e.get(k) == v for k, v in attrs.items())]
    assert len(found) == 1, f"{attrs} appears {len(found)} times"
    root.remove(found[0])
    return ET.tostring(root, encoding="unicode")


def parts(path: Path) -> dict[str, str]:
    """Every part, canonicalised, text cells inline; the save time in the core
    properties and the string table (read into the cells) left out."""
    out = {}
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        strings = string_table(path)[0] if SST in names else None
        for name in names:
            data = z.read(name).decode("utf-8")
            if name in ("docProps/core.xml", SST):
                continue
            if name.startswith("xl/worksheets/sheet"):
                data = _inline(data, strings)
            elif name == "[Content_Types].xml" and strings is not None:
                data = _without(data, {"PartName": f"/{SST}", "ContentType": SST_TYPE})
            elif name == "xl/_rels/workbook.xml.rels" and strings is not None:
                data = _without(data, {"Type": SST_REL, "Target": "sharedStrings.xml"})
            out[name] = ET.canonicalize(data) if data.lstrip().startswith("<") else data
    return out


def assert_shared_strings(path: Path) -> None:
    """Every text cell points into the table, every entry is used, none twice."""
    texts, count = string_table(path)
    assert len(set(texts)) == len(texts), "a text stored twice"
    used = []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/sheet"):
                xml = z.read(name).decode("utf-8")
                assert 't="inlineStr"' not in xml, f"{name}: an inline string"
                used += [int(i) for i in re.findall(r'<c [^>]*t="s"[^>]*><v>(\d+)</v>', xml)]
    assert len(used) == count
    assert sorted(set(used)) == list(range(len(texts)))


def assert_same_parts(ours: Path, theirs: Path) -> None:
    a, b = parts(ours), parts(theirs)
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], f"part {name} differs from openpyxl's"


def test_default_workbook_equals_openpyxls_save(tmp_path: Path) -> None:
    scenarios = load_scenarios(default_scenario_path())
    wb, _ = build(scenarios, GENERATED)
    wb.save(tmp_path / "openpyxl.xlsx")
    wb, _ = build(scenarios, GENERATED)
    xlsx_writer.save(wb, tmp_path / "ours.xlsx")
    assert_same_parts(tmp_path / "ours.xlsx", tmp_path / "openpyxl.xlsx")
    assert_shared_strings(tmp_path / "ours.xlsx")


def odd_workbook() -> openpyxl.Workbook:
    """Every kind of cell the row writer handles, and two it leaves to openpyxl."""
    from openpyxl.comments import Comment
    from openpyxl.styles import Font

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Cells & <things>"
    ws["A1"] = "  leading and trailing spaces  "
    ws["A2"] = "a < b & c > d \"quoted\" 'single'"
    ws["A3"] = '=SUM(B1:B3)&"<&>"'
    ws["A4"] = True
    ws["A5"] = False
    ws["A6"] = 0.1 + 0.2
    ws["A7"] = 12345678901234567890
    ws["A8"] = dt.datetime(2027, 1, 1, 12, 30)
    ws["A9"] = dt.date(1999, 12, 31)
    ws["A10"] = "#N/A"
    ws["A11"] = ""
    ws["A12"] = "émoji 🚀 and ünïcode"
    ws["A13"] = "line one\nline two"
    ws["B1"].font = Font(bold=True)  # styled, empty
    ws["B2"] = '=HYPERLINK("https://example.com","x")'
    ws["B3"] = "link"
    ws["B3"].hyperlink = "https://example.com/a?b=1&c=2"
    ws["C5"] = -0.0
    ws["C6"] = 1e-300
    ws["C7"] = 123.456e200
    ws.row_dimensions[20].height = 33  # a sized row without cells
    ws.row_dimensions[3].hidden = True
    ws["A10"].data_type = "e"
    noted = wb.create_sheet("Noted")  # a comment: written by openpyxl whole
    noted["A1"] = 1
    noted["A1"].comment = Comment("a note", "sheetgen")
    return wb


def test_every_kind_of_cell_equals_openpyxls_save(tmp_path: Path) -> None:
    odd_workbook().save(tmp_path / "openpyxl.xlsx")
    xlsx_writer.save(odd_workbook(), tmp_path / "ours.xlsx")
    assert_same_parts(tmp_path / "ours.xlsx", tmp_path / "openpyxl.xlsx")
    texts, _ = string_table(tmp_path / "ours.xlsx")
    assert "  leading and trailing spaces  " in texts and "line one\nline two" in texts
    back = openpyxl.load_workbook(tmp_path / "ours.xlsx")
    assert back["Noted"]["A1"].comment.text == "a note"
    assert back["Cells & <things>"]["B3"].hyperlink.target == "https://example.com/a?b=1&c=2"


def test_cached_values_are_stored_with_their_types(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    for cell in ("A1", "A2", "A3", "A4", "A5"):
        ws[cell] = "=1+1"
    cached = {"S": {"A1": 2.5, "A2": True, "A3": "a <b> & c", "A4": float("nan"), "A5": 7}}
    xlsx_writer.save(wb, tmp_path / "c.xlsx", cached)
    values = openpyxl.load_workbook(tmp_path / "c.xlsx", data_only=True)["S"]
    assert [values[c].value for c in ("A1", "A2", "A3", "A4", "A5")] == [
        2.5,
        True,
        "a <b> & c",
        None,  # not a value a cell can hold: left uncached
        7,
    ]
    formulas = openpyxl.load_workbook(tmp_path / "c.xlsx")["S"]
    assert all(formulas[c].value == "=1+1" for c in ("A1", "A2", "A3", "A4", "A5"))


def serial(value):
    """Dates read back (a date number format) as the serial numbers sheetgen stores."""
    from openpyxl.utils.datetime import to_excel

    return to_excel(value) if isinstance(value, dt.datetime) else value


@pytest.mark.parametrize("cache", [True, False])
def test_write_workbook_matches_openpyxl_plus_cache(tmp_path: Path, cache: bool) -> None:
    """Through write_workbook: the cells openpyxl reads back are the built workbook's."""
    from sheetgen.workbook import write_workbook

    scenarios = load_scenarios(default_scenario_path())
    path = write_workbook(scenarios, tmp_path / "w.xlsx", cache_values=cache)
    wb, cached = build(scenarios, GENERATED)
    back = openpyxl.load_workbook(path)
    stored = openpyxl.load_workbook(path, data_only=True)
    for ws in wb.worksheets:
        if ws.title == "About":  # shows the generation date (compared whole above)
            continue
        for row in ws.iter_rows():
            for cell in row:
                written = None if cell.value == "" else cell.value  # "" is an empty cell
                assert serial(back[ws.title][cell.coordinate].value) == written, cell.coordinate
                got = serial(stored[ws.title][cell.coordinate].value)
                if isinstance(cell.value, str) and cell.data_type == "f":
                    want = cached.get(ws.title, {}).get(cell.coordinate) if cache else None
                    if isinstance(want, float):
                        assert got == pytest.approx(want, rel=1e-12), cell.coordinate  # dates: µs
                    else:
                        assert got == want, (ws.title, cell.coordinate)


def test_cell_names_made_in_bulk_equal_names_made_one_by_one(tmp_path: Path) -> None:
    from openpyxl.workbook.defined_name import DefinedName

    from sheetgen.workbook.builder import add_cell_names

    pairs = [(f"train_days_{i}", f"'KV cache'!$D${i + 4}") for i in range(1, 6)]
    bulk, single = openpyxl.Workbook(), openpyxl.Workbook()
    add_cell_names(bulk, pairs)
    for name, ref in pairs:
        single.defined_names[name] = DefinedName(name, attr_text=ref)
    assert len({id(d) for d in bulk.defined_names.values()}) == len(pairs)  # no sharing
    for name, ref in pairs:
        assert bulk.defined_names[name].attr_text == ref
        assert dict(bulk.defined_names[name]) == dict(single.defined_names[name])
    bulk.save(tmp_path / "bulk.xlsx")
    single.save(tmp_path / "single.xlsx")
    assert_same_parts(tmp_path / "bulk.xlsx", tmp_path / "single.xlsx")
    for bad in [("Train_days_1", "'S'!$A$1"), ("train_days", "'S'!$A$1"), ("a_1", "A1")]:
        with pytest.raises(ValueError, match="not a cell name"):
            add_cell_names(openpyxl.Workbook(), [bad])


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_an_interruption_inside_an_entry_is_what_save_raises(tmp_path: Path, monkeypatch) -> None:
    """A SIGTERM that lands while an archive entry is being written leaves that entry's
    handle open, and closing the zip then fails ("open writing handle"): `save` must
    raise the interruption (one line, exit 143), not the close's ValueError (a
    traceback, exit 1; seen once in tests/test_signals.py under load), and the abandoned
    archive must not try closing again when collected ("Exception ignored ... seek of
    closed file" on stderr)."""
    import signal

    from sheetgen.output.interrupt import Interrupted

    def write_data(self) -> None:
        handle = self._archive.open("xl/partial.xml", "w")
        handle.write(b"<partial/>")
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(xlsx_writer._Writer, "write_data", write_data)
    with pytest.raises(Interrupted):
        xlsx_writer.save(openpyxl.Workbook(), tmp_path / "plan.xlsx")
