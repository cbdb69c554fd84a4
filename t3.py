import socket, time
for fam, bindaddr, dst in [(socket.AF_INET, '127.0.0.2', '0.0.0.0')]:
    for typ in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        s = socket.socket(fam, typ)
        try: s.bind((bindaddr, 0)); print('bind ok', s.getsockname())
        except OSError as e: print('bind', e)
        try:
            s.connect((dst, 41231)); print('connect ok', typ, s.getpeername()); s.send(b'via-0.0.0.0-bound-127.0.0.2')
        except OSError as e: print('connect', e)
        if typ == socket.SOCK_DGRAM:
            u = socket.socket(fam, typ); u.bind((bindaddr, 0))
            try: u.sendto(b'sendto-0.0.0.0-bound-127.0.0.2', (dst, 41231)); print('sendto ok')
            except OSError as e: print('sendto', e)
        s.close()
time.sleep(0.5)
