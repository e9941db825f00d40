_newly_passing: list[str] = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        _newly_passing.extend(value for key, value in report.user_properties if key == "newly_passing")


def pytest_terminal_summary(terminalreporter):
    if _newly_passing:
        terminalreporter.section("conformance cases now passing (add them to tests/conformance/expected_pass.txt)")
        for line in sorted(_newly_passing):
            terminalreporter.write_line(line)
