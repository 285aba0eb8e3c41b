#!/usr/bin/python3
"""Summarize one tempest subunit v2 stream into small text files worth committing.

usage: summarize.py SUITE SUBUNIT_FILE OUT_DIR
writes OUT_DIR/SUITE.summary.txt (counts and one line per test: status, id, skip reason) and
OUT_DIR/SUITE.failures.txt (the tail of each failure's traceback), and prints the counts line.
"""
import collections
import re
import sys

import subunit
import testtools

suite, path, out = sys.argv[1:4]
tests = collections.OrderedDict()


class Collect(testtools.StreamResult):
    def status(self, test_id=None, test_status=None, file_name=None, file_bytes=None, **_):
        if not test_id:
            return
        t = tests.setdefault(test_id, {'status': None, 'files': collections.defaultdict(bytes)})
        if test_status in ('success', 'fail', 'skip', 'xfail', 'uxsuccess'):
            t['status'] = test_status
        if file_name and file_bytes:
            t['files'][file_name] += file_bytes


with open(path, 'rb') as f:
    stream = subunit.ByteStreamToStreamResult(f, non_subunit_name='stdout')
    result = Collect()
    result.startTestRun()
    stream.run(result)
    result.stopTestRun()


def strip_attrs(test_id):
    return re.sub(r'\[.*\]$', '', test_id)


# Class-level fixtures (setUpClass) report under ids such as "setUpClass (module.Class)"; tests of a
# class skipped or failed as a whole are listed but never run ("not run").
counts = collections.Counter(t['status'] or 'unknown' for t in tests.values())
label = {'success': 'passed', 'fail': 'failed', 'skip': 'skipped', 'unknown': 'not run', None: 'not-run'}
line = '%s: %s' % (suite, ', '.join('%d %s' % (counts[k], label.get(k, k))
                                     for k in ('success', 'fail', 'skip', 'xfail', 'uxsuccess', 'unknown')
                                     if counts[k]))
with open('%s/%s.summary.txt' % (out, suite), 'w') as s, \
        open('%s/%s.failures.txt' % (out, suite), 'w') as fl:
    s.write(line + '\n\n')
    for test_id, t in sorted(tests.items(), key=lambda kv: (kv[1]['status'] or '', kv[0])):
        status = label.get(t['status'], t['status'])
        reason = ''
        if t['status'] == 'skip':
            reason = t['files'].get('reason', b'').decode('utf-8', 'replace').strip().splitlines()
            reason = ('  # ' + reason[0][:200]) if reason else ''
        s.write('%-7s %s%s\n' % (status, strip_attrs(test_id), reason))
        if t['status'] == 'fail':
            tb = t['files'].get('traceback', b'').decode('utf-8', 'replace').rstrip().splitlines()
            fl.write('=== %s\n%s\n\n' % (strip_attrs(test_id), '\n'.join(l[:400] for l in tb[-30:])))
print(line)
