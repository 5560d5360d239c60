/**
 * The task launcher in Perl (perl-base is part of every Debian/Ubuntu/RHEL install): a ~5 MiB
 * process forked once per driver, so each task attempt costs a fork of that small process instead
 * of one of the ~80 MiB driver, and the driver's event loop never blocks in a fork. It is also the
 * attempts' lifeline: when its stdin (a pipe only the driver holds) reaches end of file, whatever
 * killed the driver, it stops every process group it started (TERM + CONT, then KILL once that
 * group's own grace is over: a group given a long grace, the run's reaper, does not hold the others).
 *
 * Protocol (protocol.ts): requests are `<byte length>\n<payload>`, the payload NUL-separated fields
 * `L, id, cwd, log path, grace ms, argc, argv…, env…`; replies are lines: `R <version>` once ready,
 * `S <id> <pid> <start time|->` started (after exec), `E <id> <errno>` not started, `X <pid> <code> <signal>`
 * the leader exited (code -1 when killed by a signal).
 *
 * Batched both ways (issue 28): one read takes every request the driver wrote (it writes those of
 * one event-loop turn at once), and the replies of one pass of the loop — every start, failure and
 * exit it learned — leave in one write, just before it waits again: one wake-up of the driver for
 * all of them instead of one a line.
 *
 * Run as `perl -e <this>`; it writes nothing else to stdout and reads nothing but stdin.
 */
export const PERL_LAUNCHER = String.raw`
use strict; use warnings; use POSIX (); use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
my $VERSION = 1;
$SIG{$_} = 'IGNORE' for qw(HUP INT QUIT PIPE);
pipe(my $sr, my $sw) or die "sflow launcher: pipe: $!\n";
fcntl($sw, F_SETFL, fcntl($sw, F_GETFL, 0) | O_NONBLOCK);
my $quit = 0;
$SIG{CHLD} = sub { syswrite($sw, 'c') };
$SIG{TERM} = sub { $quit = 1; syswrite($sw, 't') };
binmode STDIN; binmode STDOUT;
my (%pending, %failed, %grace, %lingering);
my $buf = ''; my $out = '';
sub say_ { $out .= $_[0] . "\n" }
sub flush_ {
  while (length $out) {
    my $k = syswrite(STDOUT, $out);
    if (!defined $k) { next if $!{EINTR}; $out = ''; return }
    substr($out, 0, $k, '');
  }
}
sub alive { my $g = shift; return kill(0, -$g) || $!{EPERM} }
sub starttime {
  open(my $fh, '<', "/proc/$_[0]/stat") or return '-';
  my $s = <$fh> // ''; close $fh;
  my $i = rindex($s, ')'); return '-' if $i < 0;
  my @f = split / /, substr($s, $i + 2); return $f[19] // '-';
}
sub settle {
  my ($fd) = @_; my $p = delete $pending{$fd} or return;
  my ($er, $id, $pid, $st) = @$p; my $e = '';
  sysread($er, $e, 16); close $er;
  if (length $e) { $failed{$pid} = 1; delete $grace{$pid}; say_("E $id $e") }
  else { say_("S $id $pid $st") }
}
sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $st = $?;
    for my $fd (keys %pending) { settle($fd) if $pending{$fd}[2] == $pid }
    next if delete $failed{$pid};
    my $sig = $st & 127;
    say_("X $pid " . ($sig ? -1 : $st >> 8) . " $sig");
    if (exists $grace{$pid}) { if (alive($pid)) { $lingering{$pid} = 1 } else { delete $grace{$pid} } }
  }
}
sub launch {
  my @f = split /\0/, $_[0], -1;
  my ($op, $id, $cwd, $log, $gr, $argc) = splice(@f, 0, 6);
  return unless defined $argc && $op eq 'L';
  my @argv = splice(@f, 0, $argc);
  pipe(my $er, my $ew) or return say_("E $id " . (0 + $!));
  my $pid = fork();
  if (!defined $pid) { my $e = 0 + $!; close $er; close $ew; return say_("E $id $e") }
  if ($pid == 0) {
    close $er; close $sr; close $sw;
    $SIG{$_} = 'DEFAULT' for qw(HUP INT QUIT PIPE TERM CHLD);
    POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());
    POSIX::setsid();
    my $ok = open(STDIN, '<', '/dev/null') && open(STDOUT, '>>', $log) && open(STDERR, '>&', \*STDOUT)
      && (!length($cwd) || chdir($cwd));
    if ($ok) {
      %ENV = ();
      for (@f) { my $i = index($_, '='); $ENV{substr($_, 0, $i)} = substr($_, $i + 1) if $i > 0 }
      { no warnings; exec { $argv[0] } @argv; }
    }
    syswrite($ew, 0 + $!); POSIX::_exit(127);
  }
  close $ew;
  $grace{$pid} = $gr || 5000;
  $pending{fileno($er)} = [$er, $id, $pid, starttime($pid)];
}
sub lifeline {
  my @g = grep { alive($_) } keys %grace;
  for (@g) { kill('TERM', -$_); kill('CONT', -$_) }
  my $ms = 0; for (@g) { $ms = $grace{$_} if $grace{$_} > $ms }
  my %killed;
  for (my $t = 0; @g && $t < $ms + 2000; $t += 50) {
    select(undef, undef, undef, 0.05);
    1 while waitpid(-1, POSIX::WNOHANG()) > 0;
    for (@g) { if (!$killed{$_} && $grace{$_} <= $t) { kill('KILL', -$_); $killed{$_} = 1 } }
    @g = grep { alive($_) } @g;
  }
  kill('KILL', -$_) for @g;
  POSIX::_exit(0);
}
say_("R $VERSION");
my $reaps = 0;
while (1) {
  flush_();
  my $rin = ''; vec($rin, 0, 1) = 1; vec($rin, fileno($sr), 1) = 1;
  vec($rin, $_, 1) = 1 for keys %pending;
  my $rout;
  my $n = select($rout = $rin, undef, undef, undef);
  next if $n < 0;
  for my $fd (keys %pending) { settle($fd) if vec($rout, $fd, 1) }
  if (vec($rout, fileno($sr), 1)) {
    sysread($sr, my $x, 512); reap();
    if (++$reaps % 64 == 0) { for (keys %lingering) { next if alive($_); delete $lingering{$_}; delete $grace{$_} } }
  }
  lifeline() if $quit;
  if (vec($rout, 0, 1)) {
    my $k = sysread(STDIN, $buf, 1 << 16, length $buf);
    if (!defined $k) { next if $!{EINTR} || $!{EAGAIN}; lifeline() }
    lifeline() if $k == 0;
    while ((my $nl = index($buf, "\n")) >= 0) {
      my $len = substr($buf, 0, $nl);
      last if length($buf) < $nl + 1 + $len;
      launch(substr($buf, $nl + 1, $len));
      $buf = substr($buf, $nl + 1 + $len);
    }
  }
}
`;
